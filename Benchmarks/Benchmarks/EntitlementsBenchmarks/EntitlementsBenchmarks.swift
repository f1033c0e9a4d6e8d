import AppStore
import Benchmark
import BenchmarkSettings
import Entitlements
import Foundation

let day: Int64 = 86_400_000
let start: Int64 = 1_767_225_600_000

func transaction(_ id: Int, original: Int, product: String, from: Int64, to: Int64?, reason: TransactionReason, trial: Bool = false) -> Fact
{
    var t = JWSTransactionDecodedPayload()
    t.transactionId = String(2_000_000_000 + id)
    t.originalTransactionId = String(2_000_000_000 + original)
    t.productId = product
    t.purchaseDate = Timestamp(millisecondsSince1970: from)
    t.originalPurchaseDate = Timestamp(millisecondsSince1970: from)
    t.expiresDate = to.map(Timestamp.init(millisecondsSince1970:))
    t.transactionReason = reason
    t.price = trial ? 0 : 9990
    t.currency = "USD"
    t.storefront = "USA"
    t.environment = .production
    t.inAppOwnershipType = .purchased
    t.signedDate = t.purchaseDate
    if trial {
        t.offerType = .introductoryOffer
        t.offerDiscountType = .freeTrial
    }
    return .transaction(t)
}

func renewal(original: Int, signed: Int64, autoRenew: Bool) -> Fact {
    var r = JWSRenewalInfoDecodedPayload()
    r.originalTransactionId = String(2_000_000_000 + original)
    r.productId = "pro.monthly"
    r.autoRenewProductId = "pro.monthly"
    r.autoRenewStatus = autoRenew ? .on : .off
    r.isInBillingRetryPeriod = false
    r.signedDate = Timestamp(millisecondsSince1970: signed)
    r.environment = .production
    return .renewalInfo(r)
}

func notification(_ type: NotificationType, _ subtype: NotificationSubtype?, uuid: Int, signed: Int64, original: Int, transaction: Int)
    -> Fact
{
    .notification(
        NotificationFact(
            notificationType: type, subtype: subtype, notificationUUID: "5d1f1c1e-0000-4000-8000-\(String(100_000_000_000 + uuid))",
            signedDate: Timestamp(millisecondsSince1970: signed), originalTransactionId: String(2_000_000_000 + original),
            transactionId: String(2_000_000_000 + transaction), environment: .production))
}

/// A monthly subscriber: a free trial, then `renewals` monthly periods, with the renewal infos and notifications the
/// App Store sends along (an auto-renew switch off and on again, each renewal announced), and one non-consumable.
func customer(renewals: Int, chains: Int) -> [Fact] {
    var facts: [Fact] = []
    var id = 0
    for chain in 0..<chains {
        let original = id
        var from = start + Int64(chain) * 3 * day
        facts.append(
            transaction(id, original: original, product: "pro.monthly", from: from, to: from + 7 * day, reason: .purchase, trial: true))
        facts.append(notification(.subscribed, .initialBuy, uuid: id, signed: from, original: original, transaction: id))
        from += 7 * day
        for index in 0..<renewals {
            id += 1
            facts.append(transaction(id, original: original, product: "pro.monthly", from: from, to: from + 30 * day, reason: .renewal))
            if index % 4 == 0 { facts.append(notification(.didRenew, nil, uuid: id, signed: from, original: original, transaction: id)) }
            if index % 6 == 2 {
                facts.append(renewal(original: original, signed: from + 3 * day, autoRenew: false))
                facts.append(renewal(original: original, signed: from + 5 * day, autoRenew: true))
            }
            from += 30 * day
        }
        id += 1
    }
    facts.append(transaction(id, original: id, product: "lifetime", from: start + 40 * day, to: nil, reason: .purchase))
    return facts
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkSettings.configuration(warmupIterations: 10)

    let catalog: Catalog
    do {
        catalog = try JSONDecoder().decode(
            Catalog.self,
            from: Data(
                #"""
                {"products": [
                  {"id": "pro.monthly", "type": "autoRenewable", "group": "pro", "period": "P1M", "entitlements": ["pro"], "level": 2},
                  {"id": "pro.yearly", "type": "autoRenewable", "group": "pro", "period": "P1Y", "entitlements": ["pro"], "level": 1},
                  {"id": "lifetime", "type": "nonConsumable", "entitlements": ["pro", "extras"]},
                  {"id": "pass.year", "type": "nonRenewing", "duration": "P1Y", "entitlements": ["pass"]}
                ]}
                """#.utf8))
    } catch {
        preconditionFailure("the benchmark catalog is valid: \(error)")
    }

    // A typical customer: 20 facts (a trial and 10 monthly renewals, their renewal infos and notifications, a
    // non-consumable), evaluated in the middle of its last period.
    let typical = customer(renewals: 10, chains: 1)
    precondition(typical.count == 20, "typical customer has \(typical.count) facts")
    let typicalNow = Timestamp(millisecondsSince1970: start + 290 * day)
    // A heavy one: 1,000 facts (five subscriptions with about 11 years of monthly renewals each and their notifications and renewal infos).
    var heavy = customer(renewals: 130, chains: 5)
    heavy = Array(heavy.prefix(999)) + [heavy[heavy.count - 1]]
    precondition(heavy.count == 1_000, "heavy customer has \(heavy.count) facts")
    let heavyNow = Timestamp(millisecondsSince1970: start + 3_890 * day)

    // Reference in the same run: decoding the typical customer's 20 facts from JSON, as a server reads them back.
    let encoder = JSONEncoder()
    let lines: [Data] = typical.compactMap { try? encoder.encode($0) }
    let decoder = JSONDecoder()

    Benchmark("Entitlements.decodeFacts.typical", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            for line in lines { blackHole(try? decoder.decode(Fact.self, from: line)) }
        }
    }

    Benchmark("Entitlements.evaluate.typical", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(EntitlementEngine.evaluate(catalog: catalog, facts: typical, now: typicalNow))
        }
    }

    Benchmark("Entitlements.state.typical", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(EntitlementEngine.state(catalog: catalog, facts: typical, now: typicalNow))
        }
    }

    // A server keeps the prepared facts per customer and evaluates again when nextChangeAt passes.
    let prepared = PreparedCustomer(catalog: catalog, facts: typical)
    Benchmark("Entitlements.prepared.state.typical", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(prepared.state(at: typicalNow))
        }
    }

    Benchmark("Entitlements.evaluate.heavy", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(EntitlementEngine.evaluate(catalog: catalog, facts: heavy, now: heavyNow))
        }
    }
}
