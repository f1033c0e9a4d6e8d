import AppStore
import TestSupport

@testable import Entitlements

extension SeededGenerator {
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }
    mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &self)] }
}

/// A generated customer: realistic shapes (trials, renewals, lapses, billing trouble, upgrades, refunds, family
/// sharing, passes) with random dates, plus what the properties need to know about them.
struct RandomCustomer {
    var facts: [Fact] = []
    /// Instants in milliseconds.
    var now: Int64 = 0
    var revoked: [(transactionId: String, at: Int64)] = []
    var earliestPurchase: Int64?

    init(seed: UInt64) {
        var rng = SeededGenerator(state: seed)
        var nextId = 1
        func newId() -> String {
            defer { nextId += 1 }
            return String(1_000_000 + nextId)
        }
        for _ in 0..<rng.int(0...2) {
            let group = rng.pick(["pro", "plus"])
            let products = group == "pro" ? ["pro.monthly", "pro.yearly"] : ["plus.monthly"]
            let original = newId()
            var start = at(Double(rng.int(0...40))) + rng.int(0...day)
            var product = rng.pick(products)
            for index in 0..<Int(rng.int(1...6)) {
                let length = product == "pro.yearly" ? 365 * day : rng.pick([7, 30, 31]) * day
                let id = index == 0 ? original : newId()
                let period: PeriodType =
                    index == 0
                    ? rng.pick([.trial, .intro, .regular, .regular, .offerCode]) : rng.pick([.regular, .regular, .regular, .promo, .intro])
                var t = transaction(id, original: original, product: product, start: 0, period: period)
                t.purchaseDate = Timestamp(millisecondsSince1970: start)
                t.expiresDate = Timestamp(millisecondsSince1970: start + length)
                t.signedDate = Timestamp(millisecondsSince1970: start)
                t.transactionReason = index == 0 ? .purchase : rng.pick([.renewal, .renewal, .purchase])
                if rng.chance(0.15) { t.transactionReason = nil }
                if rng.chance(0.1) { t.inAppOwnershipType = .familyShared }
                earliestPurchase = min(earliestPurchase ?? start, start)
                if rng.chance(0.3) {
                    // An older version signed first, as an app would post it before a later change.
                    facts.append(.transaction(t))
                }
                var upgradedTo: String?
                if rng.chance(0.12) {
                    let revokedAt = start + rng.int(0...(length + 20 * day))
                    t.revocationDate = Timestamp(millisecondsSince1970: revokedAt)
                    t.revocationReason = rng.pick([.appIssue, .other])
                    t.revocationType = rng.pick([.refundFull, .refundProrated, .familyRevoke])
                    t.signedDate = Timestamp(millisecondsSince1970: max(start, revokedAt))
                    revoked.append((id, revokedAt))
                } else if products.count > 1, rng.chance(0.15) {
                    upgradedTo = products.first { $0 != product }
                    t.isUpgraded = true
                    t.signedDate = Timestamp(millisecondsSince1970: start + length / 3)
                }
                facts.append(.transaction(t))
                if rng.chance(0.35) {
                    facts.append(
                        .renewalInfo(
                            renewal(
                                original, product: product, signed: 0, autoRenew: rng.chance(0.6), billingRetry: rng.chance(0.3),
                                graceEnds: nil, intent: rng.chance(0.3) ? rng.pick([.customerCancelled, .billingError, .other]) : nil,
                                next: rng.chance(0.2) ? products.randomElement(using: &rng) : nil)))
                    if case .renewalInfo(var r) = facts[facts.count - 1] {
                        r.signedDate = Timestamp(millisecondsSince1970: start + rng.int(0...(length + 10 * day)))
                        if r.isInBillingRetryPeriod == true, rng.chance(0.5) {
                            r.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: start + length + rng.int(1...16) * day)
                        }
                        facts[facts.count - 1] = .renewalInfo(r)
                    }
                }
                if rng.chance(0.25) {
                    let kind = rng.pick(
                        [
                            (NotificationType.didChangeRenewalStatus, NotificationSubtype.autoRenewDisabled),
                            (.didChangeRenewalStatus, .autoRenewEnabled), (.didFailToRenew, .gracePeriod),
                            (.didFailToRenew, nil), (.expired, .voluntary), (.didRenew, .billingRecovery),
                            (.didChangeRenewalPref, .downgrade),
                        ] as [(NotificationType, NotificationSubtype?)])
                    facts.append(
                        .notification(
                            NotificationFact(
                                notificationType: kind.0, subtype: kind.1, notificationUUID: "n-\(newId())",
                                signedDate: Timestamp(millisecondsSince1970: start + rng.int(0...length)),
                                originalTransactionId: original, transactionId: id, environment: .production)))
                }
                if let upgradedTo {
                    start += length / 3
                    product = upgradedTo
                } else {
                    start += length
                    if rng.chance(0.2) { start += rng.int(1...90) * day }
                    if rng.chance(0.1) { product = rng.pick(products) }
                }
            }
        }
        for _ in 0..<rng.int(0...2) {
            let product = rng.pick(["lifetime", "pass.year", "coins"])
            let start = at(Double(rng.int(0...300)))
            var t = transaction(newId(), product: product, start: 0)
            t.purchaseDate = Timestamp(millisecondsSince1970: start)
            t.signedDate = t.purchaseDate
            earliestPurchase = min(earliestPurchase ?? start, start)
            if rng.chance(0.2) {
                let revokedAt = start + rng.int(0...(400 * day))
                t.revocationDate = Timestamp(millisecondsSince1970: revokedAt)
                t.revocationReason = .other
                t.revocationType = rng.pick([.refundFull, .familyRevoke])
                t.signedDate = Timestamp(millisecondsSince1970: revokedAt)
                revoked.append((t.transactionId ?? "", revokedAt))
            }
            facts.append(.transaction(t))
        }
        now = at(Double(rng.int(0...500))) + rng.int(0...day)
    }
}
