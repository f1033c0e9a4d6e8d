import AppStore
import Foundation

/// How an app answers Apple's refund requests (`CONSUMPTION_REQUEST`): ordered rules over what the server knows of the
/// customer, the first that matches decides; otherwise `defaultPreference`. An answer is sent only with the customer's
/// recorded consent, and waits `holdMinutes` for a person to decide otherwise in the dashboard.
public struct RefundPolicy: Codable, Sendable, Hashable {
    public var rules: [RefundRule]
    /// The preference when no rule matches; absent: the consumption information is sent without a preference.
    public var defaultPreference: RefundPreference?
    /// How long an answer waits before it goes out, so that a person can decide instead (0 to 660: Apple waits 12 hours).
    public var holdMinutes: Int
    /// Apple's `sampleContentProvided` (a free trial, sample or description before the purchase) when the app's report
    /// for the customer does not say.
    public var sampleContentProvided: Bool

    /// The longest hold: 11 hours, an hour inside Apple's 12 for retries.
    public static let maxHoldMinutes = 660

    public init(
        rules: [RefundRule] = [], defaultPreference: RefundPreference? = nil, holdMinutes: Int = 0, sampleContentProvided: Bool = false
    ) {
        self.rules = rules
        self.defaultPreference = defaultPreference
        self.holdMinutes = holdMinutes
        self.sampleContentProvided = sampleContentProvided
    }

    /// Its fields as JSON names them (listed, so that a request body's unknown ones can be refused).
    public enum CodingKeys: String, CodingKey, CaseIterable { case rules, defaultPreference, holdMinutes, sampleContentProvided }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rules = try c.decodeIfPresent([RefundRule].self, forKey: .rules) ?? []
        defaultPreference = try c.decodeIfPresent(RefundPreference.self, forKey: .defaultPreference)
        holdMinutes = try c.decodeIfPresent(Int.self, forKey: .holdMinutes) ?? 0
        sampleContentProvided = try c.decodeIfPresent(Bool.self, forKey: .sampleContentProvided) ?? false
    }

    /// Refuses what could never work, naming the field.
    public func validate() throws(CoreError) {
        try Self.check(defaultPreference, field: "defaultPreference")
        guard (0...Self.maxHoldMinutes).contains(holdMinutes) else {
            throw .invalidInput(field: "holdMinutes", "a hold is 0 to \(Self.maxHoldMinutes) minutes: Apple waits 12 hours for the answer")
        }
        try PolicyRuleChecks.names(rules.map(\.name))
        for (index, rule) in rules.enumerated() { try rule.validate(field: "rules[\(index)]") }
    }

    /// Refuses a preference Apple does not document (Apple's enumerations decode any string).
    public static func check(_ preference: RefundPreference?, field: String) throws(CoreError) {
        guard let preference, !preference.isKnown else { return }
        throw .invalidInput(
            field: field, "'\(preference.rawValue)' is not one of \(RefundPreference.known.map(\.rawValue).joined(separator: ", "))")
    }

    /// The preference for a request, and what decided it.
    public func decide(_ facts: RefundRequestFacts) -> RefundDecision {
        if let override = facts.override { return RefundDecision(preference: override, decidedBy: "override") }
        if let rule = rules.first(where: { $0.matches(facts) }) {
            return RefundDecision(preference: rule.preference, decidedBy: "rule:\(rule.name)")
        }
        return RefundDecision(preference: defaultPreference, decidedBy: "default")
    }
}

/// One rule of a refund policy: every condition given must hold (an absent one holds always); a condition on what the
/// server does not know (usage the app never reported) does not hold.
public struct RefundRule: Codable, Sendable, Hashable {
    public var name: String
    /// What the rule answers; absent: the consumption information without a preference.
    public var preference: RefundPreference?
    /// Apple's product types: `Auto-Renewable Subscription`, `Non-Renewing Subscription`, `Consumable`, `Non-Consumable`.
    public var productTypes: [ProductType]?
    public var productIds: [String]?
    /// Apple's `consumptionRequestReason`s: `UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`, `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`.
    public var reasons: [ConsumptionRequestReason]?
    /// Hours from the purchase to the request.
    public var minHoursSincePurchase: Double?
    public var maxHoursSincePurchase: Double?
    /// The customer's lifetime spend, net of refunds, in USD.
    public var minLifetimeSpendUSD: Double?
    public var maxLifetimeSpendUSD: Double?
    /// Purchases of the customer refunded before this request.
    public var minRefundsBefore: Int?
    public var maxRefundsBefore: Int?
    /// Whether the customer used what they bought, as the app reported it.
    public var entitlementUsed: Bool?

    public init(name: String, preference: RefundPreference?) {
        self.name = name
        self.preference = preference
    }

    /// Its fields as JSON names them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, preference, productTypes, productIds, reasons, minHoursSincePurchase, maxHoursSincePurchase
        case minLifetimeSpendUSD, maxLifetimeSpendUSD, minRefundsBefore, maxRefundsBefore, entitlementUsed
    }

    func validate(field: String) throws(CoreError) {
        try RefundPolicy.check(preference, field: "\(field).preference")
        if let unknown = productTypes?.first(where: { !$0.isKnown }) {
            throw .invalidInput(
                field: "\(field).productTypes",
                "'\(unknown)' is not one of Apple's product types: \(ProductType.known.map(\.rawValue).joined(separator: ", "))")
        }
        if let unknown = reasons?.first(where: { !$0.isKnown }) {
            throw .invalidInput(
                field: "\(field).reasons",
                "'\(unknown)' is not one of Apple's reasons: \(ConsumptionRequestReason.known.map(\.rawValue).joined(separator: ", "))")
        }
        try PolicyRuleChecks.range(minHoursSincePurchase, maxHoursSincePurchase, "HoursSincePurchase", field: field, floor: 0)
        try PolicyRuleChecks.range(minLifetimeSpendUSD, maxLifetimeSpendUSD, "LifetimeSpendUSD", field: field, floor: 0)
        try PolicyRuleChecks.range(minRefundsBefore, maxRefundsBefore, "RefundsBefore", field: field, floor: 0)
    }

    func matches(_ facts: RefundRequestFacts) -> Bool {
        if let productTypes, !productTypes.contains(where: { $0 == facts.productType }) { return false }
        if let productIds, !productIds.contains(facts.productId) { return false }
        if let reasons, !reasons.contains(where: { $0 == facts.reason }) { return false }
        if minHoursSincePurchase != nil || maxHoursSincePurchase != nil {
            guard let hours = facts.hoursSincePurchase else { return false }
            if let min = minHoursSincePurchase, hours < min { return false }
            if let max = maxHoursSincePurchase, hours > max { return false }
        }
        if let min = minLifetimeSpendUSD, facts.lifetimeSpendUSD < min { return false }
        if let max = maxLifetimeSpendUSD, facts.lifetimeSpendUSD > max { return false }
        if let min = minRefundsBefore, facts.refundsBefore < min { return false }
        if let max = maxRefundsBefore, facts.refundsBefore > max { return false }
        if let used = entitlementUsed, facts.entitlementUsed != used { return false }
        return true
    }
}

/// What the server knows of a refund request and its customer when it decides.
public struct RefundRequestFacts: Sendable, Hashable {
    public var productId: String
    public var productType: ProductType?
    public var reason: ConsumptionRequestReason?
    public var hoursSincePurchase: Double?
    public var lifetimeSpendUSD: Double
    public var refundsBefore: Int
    public var entitlementUsed: Bool?
    /// The team's preference for this customer, which comes before every rule.
    public var override: RefundPreference?

    public init(
        productId: String, productType: ProductType?, reason: ConsumptionRequestReason?, hoursSincePurchase: Double?,
        lifetimeSpendUSD: Double,
        refundsBefore: Int, entitlementUsed: Bool?, override: RefundPreference?
    ) {
        self.productId = productId
        self.productType = productType
        self.reason = reason
        self.hoursSincePurchase = hoursSincePurchase
        self.lifetimeSpendUSD = lifetimeSpendUSD
        self.refundsBefore = refundsBefore
        self.entitlementUsed = entitlementUsed
        self.override = override
    }
}

/// A policy's answer to one request.
public struct RefundDecision: Sendable, Hashable {
    /// Nil: the consumption information without a preference.
    public var preference: RefundPreference?
    /// `rule:<name>`, `default` or `override`.
    public var decidedBy: String
}
