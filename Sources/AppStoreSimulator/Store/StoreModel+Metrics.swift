import AppStore
import Entitlements

/// The headline metrics the simulator expects, from its own bookkeeping (never from the server's Analytics code), in
/// USD at the rates its storefront prices imply (`Storefront.usdRates`).
public struct ExpectedMetrics: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Paid subscriptions whose current period is paid, active or in grace, bought by the customer (not shared).
    public var activeSubscriptions = 0
    public var activeTrials = 0
    /// Their prices per month: 30 per day, 4 per week, 1 per month, 1/12 per year of the product's period.
    public var mrr = 0.0
    /// Gross minus refunds of every purchase bought by its customer, by currency (milliunits) and in USD.
    public var revenueByCurrency: [String: Int64] = [:]
    public var netRevenue = 0.0
    public var trialsStarted = 0

    public var description: String {
        "active \(activeSubscriptions), trials \(activeTrials), MRR \(mrr), net revenue \(netRevenue), trials started \(trialsStarted)"
    }
}

extension Storefront {
    /// USD per unit of each storefront currency: one over the price of a dollar.
    public static var usdRates: [String: Double] {
        var rates: [String: Double] = [:]
        for storefront in all where rates[storefront.currency] == nil { rates[storefront.currency] = 1 / storefront.perUSD }
        return rates
    }

    /// `date,currency,usd_per_unit` CSV of `usdRates`, dated `day` (what `storekeeper simulate rates` prints).
    public static func ratesCSV(day: String = "2000-01-01") -> String {
        (["date,currency,usd_per_unit"]
            + usdRates.keys.sorted().compactMap { currency in
                usdRates[currency].map { "\(day),\(currency),\($0)" }
            }).joined(separator: "\n") + "\n"
    }
}

extension StoreModel {
    public func expectedMetrics() -> ExpectedMetrics {
        var expected = ExpectedMetrics()
        let rates = Storefront.usdRates
        for id in subscriptionOrder {
            guard let s = subscriptions[id], s.ownership != .familyShared else { continue }
            for p in s.periods {
                if p.offer == .freeTrial { expected.trialsStarted += 1 }
                guard p.price > 0 else { continue }
                let net = Self.kept(p.price, p.revocation)
                expected.revenueByCurrency[p.currency, default: 0] += net
                expected.netRevenue += Double(net) / 1000 * (rates[p.currency] ?? .nan)
            }
            guard s.status == .active || s.status == .gracePeriod,
                let current = s.status == .gracePeriod ? s.periods.last : s.periods.last(where: { $0.start <= now && now < $0.end })
            else { continue }
            if current.offer == .freeTrial {
                expected.activeTrials += 1
            } else if current.price > 0, current.revocation == nil {
                expected.activeSubscriptions += 1
                let perMonth: Double
                switch current.commitment == nil ? app.catalog[current.productId]?.period : nil {
                case let period? where period.months > 0: perMonth = 1 / Double(period.months)
                case let period? where period.days > 0 && period.days % 7 == 0: perMonth = 4 / Double(period.days / 7)
                case let period? where period.days > 0: perMonth = 30 / Double(period.days)
                default: perMonth = 1
                }
                expected.mrr += Double(current.price) / 1000 * perMonth * (rates[current.currency] ?? .nan)
            }
        }
        for id in oneTimeOrder {
            guard let o = oneTime[id], o.price > 0 else { continue }
            let net = Self.kept(o.price, o.revocation)  // the price of the whole quantity, as signed
            expected.revenueByCurrency[o.currency, default: 0] += net
            expected.netRevenue += Double(net) / 1000 * (rates[o.currency] ?? .nan)
        }
        return expected
    }

    /// What a purchase keeps after its refund: all of it, none, or the share a prorated refund leaves.
    static func kept(_ price: Int64, _ revocation: (date: Int64, reason: RevocationReason, type: RevocationType, percentage: Int32?)?)
        -> Int64
    {
        guard let revocation else { return price }
        guard let share = revocation.percentage else { return 0 }
        return price - (price * Int64(share) + 50_000) / 100_000
    }

    /// What one customer bought, from the store's bookkeeping: a free trial started, anything paid for (refunded or
    /// not), and the net revenue in USD at the storefront rates. Family-shared access is not the customer's purchase.
    public func outcome(of name: String) -> (startedTrial: Bool, paid: Bool, netUSD: Double) {
        guard let customer = customers[name] else { return (false, false, 0) }
        let rates = Storefront.usdRates
        var trial = false
        var paid = false
        var net = 0.0
        for id in customer.subscriptionIds {
            guard let s = subscriptions[id], s.customer == name, s.ownership != .familyShared else { continue }
            for p in s.periods {
                if p.offer == .freeTrial { trial = true }
                guard p.price > 0 else { continue }
                paid = true
                net += Double(Self.kept(p.price, p.revocation)) / 1000 * (rates[p.currency] ?? .nan)
            }
        }
        for id in customer.purchaseIds {
            guard let o = oneTime[id], o.customer == name, o.price > 0 else { continue }
            paid = true
            net += Double(Self.kept(o.price, o.revocation)) / 1000 * (rates[o.currency] ?? .nan)
        }
        return (trial, paid, net)
    }
}
