import Entitlements
import Foundation

/// Realistic customer lifecycles, for load: who subscribes to what and where, who takes a trial and converts,
/// who cancels, whose card fails and recovers, who asks for a refund. The result is a scenario, played like any
/// other; the store's clock does the renewals.
public struct Population: Sendable {
    /// Rates, each a probability per customer.
    public struct Rates: Sendable, Hashable {
        public var trialTakeUp = 0.5
        /// Of trials: turned off before the trial ends.
        public var trialCancellation = 0.4
        /// Of paying subscribers: auto-renew turned off at some point in the run (churn).
        public var churn = 0.35
        public var billingFailure = 0.08
        /// Of billing failures: the customer fixes the payment method.
        public var billingRecovery = 0.6
        public var refund = 0.03
        public var oneTimePurchase = 0.15
        public var upgrade = 0.05
        /// Of yearly subscribers without a trial: sold as a commitment plan (twelve monthly payments).
        public var commitmentPlan = 0.3

        public init() {}
    }

    public var customers: Int
    public var days: Int
    public var seed: UInt64
    public var rates = Rates()

    public init(customers: Int, days: Int, seed: UInt64) {
        self.customers = customers
        self.days = days
        self.seed = seed
    }

    /// Storefronts by share of customers.
    static let storefronts: [(code: String, weight: Double)] = [
        ("USA", 0.45), ("DEU", 0.15), ("GBR", 0.1), ("JPN", 0.1), ("BRA", 0.1), ("IND", 0.1),
    ]

    /// The steps of every customer's life, in time order. Each customer is named `c<number>`; steps that are
    /// impossible by the time they come (cancelling a subscription that already ended) are skipped when played.
    public func scenario(catalog: Catalog) -> Scenario {
        var random = SimulatorRandom(seed: seed)
        let subscriptions = catalog.products.filter { $0.type == .autoRenewable && $0.period != nil }
        let monthly = subscriptions.filter { ($0.period?.months ?? 0) < 12 }
        let yearly = subscriptions.filter { ($0.period?.months ?? 0) >= 12 }
        let oneTime = catalog.products.filter { $0.type != .autoRenewable }
        var steps: [ScenarioStep] = []
        steps.reserveCapacity(customers * 4)
        let span = Double(max(1, days))
        for index in 0..<customers {
            let name = "c\(index + 1)"
            let storefront = Self.pick(Self.storefronts, &random)
            let join = Double.random(in: 0..<(span * 0.9), using: &random)
            var arrival = ScenarioStep(day: join, .customer, customer: name)
            arrival.storefront = storefront
            steps.append(arrival)
            let pool = (random.chance(0.7) || yearly.isEmpty) ? monthly : yearly
            guard let product = pool.isEmpty ? nil : pool[Int.random(in: 0..<pool.count, using: &random)] else { continue }
            var subscribe = ScenarioStep(day: join, .subscribe, customer: name, product: product.id)
            let trial = random.chance(rates.trialTakeUp)
            if trial { subscribe.offer = .freeTrial }
            if !trial, product.period?.months == 12, product.period?.days == 0, random.chance(rates.commitmentPlan) {
                subscribe.billingPlan = "monthly"
            }
            steps.append(subscribe)
            let periodDays = Double(max(7, (product.period?.months ?? 0) * 30 + (product.period?.days ?? 0)))
            if trial, random.chance(rates.trialCancellation) {
                steps.append(
                    ScenarioStep(
                        day: join + Double.random(in: 0.1..<(periodDays * 0.9), using: &random), .autoRenewOff, customer: name,
                        product: product.id))
            } else if random.chance(rates.churn) {
                let after = Double.random(in: periodDays..<(periodDays * 6), using: &random)
                steps.append(ScenarioStep(day: join + after, .autoRenewOff, customer: name, product: product.id))
            }
            if random.chance(rates.billingFailure) {
                let at = join + Double.random(in: 1..<(span - join + 1), using: &random)
                steps.append(ScenarioStep(day: at, .failPayments, customer: name))
                if random.chance(rates.billingRecovery) {
                    steps.append(
                        ScenarioStep(day: at + periodDays + Double.random(in: 1..<20, using: &random), .recoverBilling, customer: name))
                }
            }
            if random.chance(rates.upgrade),
                let better = subscriptions.first(where: { $0.group == product.group && ($0.level ?? 0) < (product.level ?? 0) })
            {
                steps.append(
                    ScenarioStep(
                        day: join + Double.random(in: 1..<periodDays, using: &random), .changeProduct, customer: name, product: better.id))
            }
            if random.chance(rates.refund) {
                var refund = ScenarioStep(
                    day: join + Double.random(in: 1..<(periodDays * 2), using: &random), .refund, customer: name, product: product.id)
                refund.reason = random.chance(0.3) ? "appIssue" : "other"
                steps.append(refund)
            }
            if !oneTime.isEmpty, random.chance(rates.oneTimePurchase) {
                let item = oneTime[Int.random(in: 0..<oneTime.count, using: &random)]
                steps.append(
                    ScenarioStep(
                        day: join + Double.random(in: 0..<(span - join), using: &random), .buyOnce, customer: name, product: item.id))
            }
        }
        // In time order; one customer's steps keep their order at equal instants.
        let ordered = steps.enumerated().sorted { ($0.element.day, $0.offset) < ($1.element.day, $1.offset) }.map(\.element)
        return Scenario(name: "population-\(customers)-\(days)-\(seed)", steps: ordered.filter { $0.day <= span })
    }

    static func pick(_ weighted: [(code: String, weight: Double)], _ random: inout SimulatorRandom) -> String {
        var roll = Double.random(in: 0..<weighted.reduce(0) { $0 + $1.weight }, using: &random)
        for item in weighted {
            if roll < item.weight { return item.code }
            roll -= item.weight
        }
        return weighted[weighted.count - 1].code
    }
}
