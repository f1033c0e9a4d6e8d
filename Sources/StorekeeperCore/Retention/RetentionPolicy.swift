import AppStore
import Entitlements
import Foundation

/// What the server answers Apple when a customer opens a subscription's cancellation screen: one of the app's approved
/// messages (uploaded with `storekeeper retention messages upload`), alone, with a switch to another plan, or with a
/// promotional offer the server signs; or `none`, which lets Apple show the default message of the product and locale.
public struct RetentionAnswer: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        case message, alternateProduct, promotionalOffer, none
    }

    public var type: Kind
    /// The approved message's UUID (every kind but `none`).
    public var messageIdentifier: String?
    /// `alternateProduct`: the product of the same subscription group to switch to. `promotionalOffer`: the product the
    /// offer is for (the subscription's own when absent).
    public var productId: String?
    /// `alternateProduct`: `MONTHLY` for a 12-month commitment billed monthly.
    public var billingPlanType: String?
    /// `promotionalOffer`: the offer's identifier in App Store Connect.
    public var offerIdentifier: String?

    public init(
        type: Kind, messageIdentifier: String? = nil, productId: String? = nil, billingPlanType: String? = nil,
        offerIdentifier: String? = nil
    ) {
        self.type = type
        self.messageIdentifier = messageIdentifier
        self.productId = productId
        self.billingPlanType = billingPlanType
        self.offerIdentifier = offerIdentifier
    }

    /// Its fields as JSON names them (listed, so that a request body's unknown ones can be refused).
    public enum CodingKeys: String, CodingKey, CaseIterable { case type, messageIdentifier, productId, billingPlanType, offerIdentifier }

    /// Refuses an answer Apple could not show, naming the field.
    func validate(field: String, config: AppConfiguration) throws(CoreError) {
        if type == .none {
            for (name, value) in [
                ("messageIdentifier", messageIdentifier), ("productId", productId), ("offerIdentifier", offerIdentifier),
                ("billingPlanType", billingPlanType),
            ]
            where value != nil {
                throw .invalidInput(field: "\(field).\(name)", "an answer of type none shows Apple's default message: leave \(name) out")
            }
            return
        }
        for (name, value) in [("productId", productId), ("offerIdentifier", offerIdentifier)] where value?.isEmpty == true {
            throw .invalidInput(field: "\(field).\(name)", "is empty")
        }
        guard let messageIdentifier, UUID(uuidString: messageIdentifier) != nil else {
            throw .invalidInput(field: "\(field).messageIdentifier", "the UUID of an approved message is required")
        }
        switch type {
        case .alternateProduct:
            guard let productId, !productId.isEmpty else {
                throw .invalidInput(field: "\(field).productId", "the product to switch to is required")
            }
            if let product = config.catalog[productId], product.type != .autoRenewable {
                throw .invalidInput(field: "\(field).productId", "'\(productId)' is not an auto-renewable subscription")
            }
            if offerIdentifier != nil {
                throw .invalidInput(field: "\(field).offerIdentifier", "only a promotionalOffer has an offer identifier")
            }
            if let plan = billingPlanType, plan != "MONTHLY" {
                throw .invalidInput(field: "\(field).billingPlanType", "Apple's only billing plan type is MONTHLY, not '\(plan)'")
            }
        case .promotionalOffer:
            guard let offerIdentifier, !offerIdentifier.isEmpty else {
                throw .invalidInput(field: "\(field).offerIdentifier", "the promotional offer's identifier is required")
            }
            guard config.offerSigningKey != nil else {
                throw .invalidInput(
                    field: "\(field).offerIdentifier", "the app has no offerSigningKey: a promotional offer must be signed with one")
            }
            if billingPlanType != nil {
                throw .invalidInput(field: "\(field).billingPlanType", "only an alternateProduct has a billing plan type")
            }
        case .message:
            for (name, value) in [("productId", productId), ("offerIdentifier", offerIdentifier), ("billingPlanType", billingPlanType)]
            where value != nil {
                throw .invalidInput(field: "\(field).\(name)", "a message alone has no \(name)")
            }
        case .none: break
        }
    }
}

/// How an app answers Apple's Get Retention Message requests: ordered rules over what the server knows of the customer
/// and the subscription, the first that matches decides; otherwise `defaultAnswer`, and without one, an empty answer
/// (Apple's default message for the product and locale). A split test on the placement `cancel` decides before the
/// rules for the customers it includes.
public struct RetentionPolicy: Codable, Sendable, Hashable {
    public var rules: [RetentionRule]
    public var defaultAnswer: RetentionAnswer?

    public init(rules: [RetentionRule] = [], defaultAnswer: RetentionAnswer? = nil) {
        self.rules = rules
        self.defaultAnswer = defaultAnswer
    }

    /// Its fields as JSON names them.
    public enum CodingKeys: String, CodingKey, CaseIterable { case rules, defaultAnswer }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rules = try c.decodeIfPresent([RetentionRule].self, forKey: .rules) ?? []
        defaultAnswer = try c.decodeIfPresent(RetentionAnswer.self, forKey: .defaultAnswer)
    }

    /// Refuses what could never work, naming the field.
    public func validate(config: AppConfiguration) throws(CoreError) {
        try defaultAnswer?.validate(field: "defaultAnswer", config: config)
        try PolicyRuleChecks.names(rules.map(\.name))
        for (index, rule) in rules.enumerated() { try rule.validate(field: "rules[\(index)]", config: config) }
    }

    /// Whether a rule asks for the customer's lifetime spend (a ledger read, made only then).
    var needsSpend: Bool { rules.contains { $0.minLifetimeSpendUSD != nil || $0.maxLifetimeSpendUSD != nil } }

    /// The answer for a request, and what decided it.
    func decide(_ facts: RetentionFacts) -> RetentionDecision {
        if let rule = rules.first(where: { $0.matches(facts) }) {
            return RetentionDecision(answer: rule.answer, decidedBy: "rule:\(rule.name)")
        }
        if let defaultAnswer { return RetentionDecision(answer: defaultAnswer, decidedBy: "default") }
        return RetentionDecision(answer: RetentionAnswer(type: .none), decidedBy: "none")
    }
}

/// One rule of a retention policy: every condition given must hold (an absent one holds always); a condition on what
/// the server does not know (a subscription it never saw) does not hold.
public struct RetentionRule: Codable, Sendable, Hashable {
    public var name: String
    public var answer: RetentionAnswer
    /// The subscription's product, as Apple's request names it.
    public var productIds: [String]?
    /// The customer's App Store locale: `en-US` matches itself, `en` every English locale.
    public var locales: [String]?
    /// The subscription's current period: `trial`, `intro`, `promo`, `offerCode`, `winBack`, `regular`.
    public var periodTypes: [PeriodType]?
    /// The subscription's state: `active`, `gracePeriod`, `billingRetry`, `expired`, `revoked`.
    public var statuses: [RenewalState]?
    /// Days since the subscription's first purchase.
    public var minDaysSubscribed: Double?
    public var maxDaysSubscribed: Double?
    /// The customer's lifetime spend, net of refunds, in USD.
    public var minLifetimeSpendUSD: Double?
    public var maxLifetimeSpendUSD: Double?

    public init(name: String, answer: RetentionAnswer) {
        self.name = name
        self.answer = answer
    }

    /// Its fields as JSON names them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, answer, productIds, locales, periodTypes, statuses, minDaysSubscribed, maxDaysSubscribed
        case minLifetimeSpendUSD, maxLifetimeSpendUSD
    }

    func validate(field: String, config: AppConfiguration) throws(CoreError) {
        try answer.validate(field: "\(field).answer", config: config)
        if let locales, let empty = locales.firstIndex(where: \.isEmpty) {
            throw .invalidInput(field: "\(field).locales[\(empty)]", "is empty")
        }
        try PolicyRuleChecks.range(minDaysSubscribed, maxDaysSubscribed, "DaysSubscribed", field: field, floor: 0)
        try PolicyRuleChecks.range(minLifetimeSpendUSD, maxLifetimeSpendUSD, "LifetimeSpendUSD", field: field, floor: 0)
    }

    func matches(_ facts: RetentionFacts) -> Bool {
        if let productIds, !productIds.contains(facts.productId) { return false }
        if let locales, !locales.contains(where: { Self.locale(facts.userLocale, matches: $0) }) { return false }
        if periodTypes != nil || statuses != nil || minDaysSubscribed != nil || maxDaysSubscribed != nil {
            guard let subscription = facts.subscription else { return false }
            if let periodTypes, !periodTypes.contains(subscription.periodType) { return false }
            if let statuses, !statuses.contains(subscription.status) { return false }
            let start = (subscription.originalPurchaseDate ?? subscription.purchaseDate).millisecondsSince1970
            let days = Double(facts.now - start) / 86_400_000
            if let min = minDaysSubscribed, days < min { return false }
            if let max = maxDaysSubscribed, days > max { return false }
        }
        if minLifetimeSpendUSD != nil || maxLifetimeSpendUSD != nil {
            guard let spend = facts.lifetimeSpendUSD else { return false }
            if let min = minLifetimeSpendUSD, spend < min { return false }
            if let max = maxLifetimeSpendUSD, spend > max { return false }
        }
        return true
    }

    /// `en-US` matches `en-US` and `en`; `en_US` is read as `en-US`; case does not matter.
    static func locale(_ given: String, matches pattern: String) -> Bool {
        let given = given.replacingOccurrences(of: "_", with: "-").lowercased()
        let pattern = pattern.replacingOccurrences(of: "_", with: "-").lowercased()
        return given == pattern || given.hasPrefix(pattern + "-")
    }
}

/// What the server knows when it answers a retention request.
struct RetentionFacts: Sendable {
    var productId: String
    var userLocale: String
    /// The subscription the customer is about to cancel, as the customer's state shows it (nil: never seen).
    var subscription: SubscriptionState?
    /// Read only when a rule needs it.
    var lifetimeSpendUSD: Double?
    var now: Int64
}

/// The answer a policy chose and why.
struct RetentionDecision: Sendable, Hashable {
    var answer: RetentionAnswer
    /// `rule:<name>`, `default` or `none`.
    var decidedBy: String
}
