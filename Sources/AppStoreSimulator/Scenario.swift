import AppStore
import Foundation

/// A readable script of what customers do and when:
///
/// ```json
/// {"name": "billing-grace-recovery",
///  "description": "A monthly subscriber's card fails at renewal; they fix it during the grace period.",
///  "steps": [
///    {"day": 0, "do": "subscribe", "customer": "ann", "product": "pro.monthly", "offer": "freeTrial"},
///    {"day": 30, "do": "failPayments", "customer": "ann"},
///    {"day": 40, "do": "recoverBilling", "customer": "ann"}]}
/// ```
///
/// Days are from the scenario's start (fractions allowed); the store's clock renews, fails and expires
/// subscriptions on its own between steps.
public struct Scenario: Codable, Hashable, Sendable {
    public var name: String
    public var description: String?
    /// Overrides the app's billing grace period (0: none).
    public var gracePeriodDays: Int?
    public var steps: [ScenarioStep]

    public init(name: String, description: String? = nil, gracePeriodDays: Int? = nil, steps: [ScenarioStep]) {
        self.name = name
        self.description = description
        self.gracePeriodDays = gracePeriodDays
        self.steps = steps
    }

    /// Scenarios span at most a century: instants stay far from overflow on any clock.
    public static let maxDay: Double = 36_500

    /// The last step's day.
    public var span: Double { steps.map(\.day).max() ?? 0 }

    /// Reads a scenario, with a clear message for what is wrong in it.
    public static func decode(_ data: Data, source: String) throws -> Scenario {
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw StoreError("\(source): \(Self.describe(error))")
        }
        if let days = scenario.gracePeriodDays, !(0...60).contains(days) {
            throw StoreError("\(source): gracePeriodDays is 0 (none) to 60")
        }
        var previous = -Double.infinity
        for (index, step) in scenario.steps.enumerated() {
            guard step.day.isFinite, (0...Self.maxDay).contains(step.day) else {
                throw StoreError("\(source): step \(index + 1): day must be from 0 to \(Int(Self.maxDay))")
            }
            guard step.day >= previous else {
                throw StoreError("\(source): step \(index + 1): steps go in time order (day \(step.day) after day \(previous))")
            }
            previous = step.day
        }
        return scenario
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)).\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// One step of a scenario: at `day`, `do` an action with its arguments.
public struct ScenarioStep: Codable, Hashable, Sendable {
    public enum Action: String, Codable, Hashable, Sendable, CaseIterable {
        /// Adds a customer (with `storefront`); customers named in other steps are added in the USA storefront.
        case customer
        case subscribe, changeProduct, buyOnce
        case autoRenewOff, autoRenewOn
        case failPayments, recoverBilling
        case refund, declineRefund, reverseRefund, consumptionRequest
        /// Apple decides a requested refund by the preference the developer sent (`otherwise` without one).
        case decideRefund
        case shareFamily, stopSharing
        case priceIncrease, acceptPriceIncrease
        case extendRenewal, extendAll
        case removeFromSale
        case testNotification, externalPurchaseToken, rescindConsent, advancedCommerce
        /// Nothing: lets time pass (and the server be checked) at that day.
        case wait
    }

    public enum Offer: String, Codable, Hashable, Sendable {
        case none, freeTrial, payAsYouGo, payUpFront, promotional, offerCode
    }

    public var day: Double
    public var action: Action
    public var customer: String?
    public var product: String?
    public var offer: Offer?
    /// The promotional offer's or offer code's identifier.
    public var offerId: String?
    /// Introductory periods (pay as you go or up front).
    public var periods: Int?
    public var member: String?
    /// `appIssue` or `other` for refunds; Apple's consumption request reason (`UNINTENDED_PURCHASE` …).
    public var reason: String?
    /// A prorated refund's share, in milli-percent (50000 = 50%).
    public var percentage: Int32?
    public var days: Int?
    /// A new price in milliunits of USD.
    public var usd: Int64?
    public var consent: Bool?
    /// Apple's subtype, for `externalPurchaseToken`.
    public var subtype: String?
    /// Apple's notification type, for `advancedCommerce` (`METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`).
    public var type: String?
    public var storefront: String?
    public var quantity: Int32?
    /// For `decideRefund`: `grant` or `decline` when the developer sent no preference.
    public var otherwise: String?
    /// For `subscribe`: `monthly` sells a yearly product as a commitment plan (twelve monthly payments).
    public var billingPlan: String?

    enum CodingKeys: String, CodingKey {
        case day
        case action = "do"
        case customer, product, offer, offerId, periods, member, reason, percentage, days, usd, consent
        case subtype, type, storefront, quantity, otherwise, billingPlan
    }

    public init(day: Double, _ action: Action, customer: String? = nil, product: String? = nil) {
        self.day = day
        self.action = action
        self.customer = customer
        self.product = product
    }

    func required(_ value: String?, _ name: String) throws(StoreError) -> String {
        guard let value, !value.isEmpty else { throw StoreError("'\(action.rawValue)' needs \(name)") }
        return value
    }

    /// Apple's introductory offers last 1 to 12 periods.
    func introPeriods() throws(StoreError) -> Int {
        let value = periods ?? 3
        guard (1...12).contains(value) else { throw StoreError("an introductory offer lasts 1 to 12 periods") }
        return value
    }

    var purchaseOffer: PurchaseOffer {
        get throws(StoreError) {
            switch offer ?? .none {
            case .none: return .none
            case .freeTrial: return .freeTrial
            case .payAsYouGo: return .payAsYouGo(periods: try introPeriods())
            case .payUpFront: return .payUpFront(periods: try introPeriods())
            case .promotional: return .promotional(id: try required(offerId, "offerId"))
            case .offerCode: return .offerCode(id: try required(offerId, "offerId"))
            }
        }
    }
}

extension StoreModel {
    /// The instant of a scenario day, from `start`.
    public func instant(day: Double, from start: Int64) -> Int64 {
        start + Int64((day * Double(time.days(1))).rounded())
    }

    /// Performs one step at its instant: first what time brings until then, then the step's action.
    public mutating func perform(_ step: ScenarioStep, start: Int64) throws -> [SimulatedNotification] {
        var sent = try advance(to: instant(day: step.day, from: start))
        sent += try act(step)
        return sent
    }

    mutating func act(_ step: ScenarioStep) throws -> [SimulatedNotification] {
        if let customer = step.customer {
            try addCustomer(customer, storefront: step.action == .customer ? step.storefront : nil)
        }
        func who() throws(StoreError) -> String { try step.required(step.customer, "customer") }
        switch step.action {
        case .customer:
            _ = try who()
            return []
        case .wait: return []
        case .subscribe:
            guard step.billingPlan == nil || step.billingPlan == "monthly" else {
                throw StoreError("'subscribe' takes billingPlan \"monthly\" (a commitment plan) or none, not '\(step.billingPlan ?? "")'")
            }
            return try subscribe(
                who(), product: step.required(step.product, "product"), offer: step.purchaseOffer,
                billedMonthly: step.billingPlan == "monthly")
        case .changeProduct: return try changeProduct(who(), to: step.required(step.product, "product"), offer: step.purchaseOffer)
        case .buyOnce:
            let code: String?
            switch step.offer {
            case nil, .some(.none): code = nil
            case .some(.offerCode): code = try step.required(step.offerId, "offerId")
            case .some(let other): throw StoreError("a one-time product takes an offer code, not \(other.rawValue)")
            }
            return try buyOnce(who(), product: step.required(step.product, "product"), quantity: step.quantity ?? 1, offerCode: code)
        case .autoRenewOff: return try setAutoRenew(who(), product: step.product, on: false)
        case .autoRenewOn: return try setAutoRenew(who(), product: step.product, on: true)
        case .failPayments:
            try failPayments(who())
            return []
        case .recoverBilling: return try recoverBilling(who())
        case .refund:
            let reason = step.reason ?? "other"
            guard reason == "appIssue" || reason == "other" else { throw StoreError("a refund's reason is appIssue or other") }
            return try refund(who(), product: step.product, appIssue: reason == "appIssue", percentage: step.percentage)
        case .declineRefund: return try declineRefund(who(), product: step.product)
        case .reverseRefund: return try reverseRefund(who(), product: step.product)
        case .consumptionRequest:
            let reason = ConsumptionRequestReason(rawValue: step.reason ?? "UNINTENDED_PURCHASE")
            guard reason.isKnown else { throw StoreError("unknown consumption request reason '\(reason.rawValue)'") }
            return try requestConsumption(who(), product: step.product, reason: reason)
        case .decideRefund: return try decideRefund(who(), product: step.product, otherwise: step.otherwise ?? "grant")
        case .shareFamily: return try shareWithFamily(who(), member: step.required(step.member, "member"), product: step.product)
        case .stopSharing: return try stopSharing(who(), member: step.required(step.member, "member"), product: step.product)
        case .priceIncrease:
            let product = try step.required(step.product, "product")
            guard let usd = step.usd, (1...10_000_000).contains(usd) else {
                throw StoreError("'priceIncrease' needs usd, the new price in milliunits (Apple's prices go up to 10000 USD)")
            }
            return try increasePrice(product, usd: usd, consentRequired: step.consent ?? true)
        case .acceptPriceIncrease: return try acceptPriceIncrease(who(), product: step.product)
        case .extendRenewal: return try extendRenewal(who(), product: step.product, days: step.days ?? 7)
        case .extendAll: return try extendAll(step.required(step.product, "product"), days: step.days ?? 7)
        case .removeFromSale:
            try removeFromSale(step.required(step.product, "product"))
            return []
        case .testNotification: return [try testNotification()]
        case .externalPurchaseToken:
            let subtype = NotificationSubtype(rawValue: step.subtype ?? "UNREPORTED")
            guard [.unreported, .created, .activeTokenReminder].contains(subtype) else {
                throw StoreError("EXTERNAL_PURCHASE_TOKEN's subtypes are UNREPORTED, CREATED and ACTIVE_TOKEN_REMINDER")
            }
            return [try externalPurchaseToken(subtype)]
        case .rescindConsent: return [try rescindConsent(customer: step.customer)]
        case .advancedCommerce:
            let type = NotificationType(rawValue: step.type ?? "METADATA_UPDATE")
            guard [.metadataUpdate, .migration, .priceChange].contains(type) else {
                throw StoreError("advancedCommerce sends METADATA_UPDATE, MIGRATION or PRICE_CHANGE")
            }
            return try advancedCommerceNotice(type, customer: who(), product: step.product)
        }
    }
}
