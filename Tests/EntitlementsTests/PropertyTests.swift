import AppStore
import PropertyBased
import TestSupport
import Testing

@testable import Entitlements

/// Properties of the engine over generated customers. Each case is a seed: a failure names it, and
/// `RandomCustomer(seed:)` rebuilds the customer.
@Suite("Properties")
struct PropertyTests {
    static let seeds = Gen<UInt64>.uint64()

    @Test("Any permutation or duplication of the facts gives the same state and the same events")
    func orderIndependence() async {
        await propertyCheck(count: 300, input: Self.seeds) { seed in
            let customer = RandomCustomer(seed: seed)
            var rng = SeededGenerator(state: ~seed)
            var shuffled = customer.facts
            for fact in customer.facts where rng.chance(0.4) { shuffled.append(fact) }
            shuffled.shuffle(using: &rng)
            let original = evaluate(customer.facts, at: customer.now)
            let reordered = evaluate(shuffled, at: customer.now)
            #expect(original == reordered, "seed \(seed)")
            #expect(Set(original.events.map(\.id)).count == original.events.count, "event ids are unique (seed \(seed))")
        }
    }

    @Test("A revocation removes access from its date on")
    func revocationRemovesAccess() async {
        await propertyCheck(count: 300, input: Self.seeds) { seed in
            let customer = RandomCustomer(seed: seed)
            var rng = SeededGenerator(state: seed &+ 1)
            for (transactionId, revokedAt) in customer.revoked {
                let when = revokedAt + rng.int(0...(120 * day))
                let state = evaluate(customer.facts, at: when).state
                for subscription in state.subscriptions where subscription.transactionId == transactionId {
                    #expect(!subscription.grantsAccess, "seed \(seed): subscription period \(transactionId) revoked at \(revokedAt)")
                }
                for purchase in state.nonSubscriptions where purchase.transactionId == transactionId {
                    #expect(purchase.active != true, "seed \(seed): purchase \(transactionId) revoked at \(revokedAt)")
                }
                let oneTime = state.nonSubscriptions.contains { $0.transactionId == transactionId }
                for (id, access) in state.entitlements where oneTime && access.active && access.transactionId == transactionId {
                    Issue.record("seed \(seed): entitlement \(id) still comes from revoked \(transactionId)")
                }
            }
        }
    }

    @Test("A later expiry is never lost to an earlier fact")
    func laterExpiryKept() async {
        await propertyCheck(count: 300, input: Self.seeds) { seed in
            let customer = RandomCustomer(seed: seed)
            let base = evaluate(customer.facts, at: customer.now).state
            // For every transaction, an older, stale copy that says it expired sooner.
            var stale = customer.facts
            for case .transaction(var t) in customer.facts {
                guard let expires = t.expiresDate, let signed = t.signedDate, let purchase = t.purchaseDate else { continue }
                t.expiresDate = Timestamp(
                    millisecondsSince1970: max(purchase.millisecondsSince1970, expires.millisecondsSince1970 - 5 * day))
                t.signedDate = Timestamp(millisecondsSince1970: signed.millisecondsSince1970 - 1)
                t.revocationDate = nil
                t.isUpgraded = nil
                stale.append(.transaction(t))
            }
            let withStale = evaluate(stale, at: customer.now).state
            #expect(withStale == base, "seed \(seed)")
            for subscription in base.subscriptions {
                let latest = customer.facts.compactMap { fact -> Int64? in
                    guard case .transaction(let t) = fact, t.originalTransactionId == subscription.originalTransactionId,
                        t.revocationDate == nil, t.isUpgraded != true, let start = t.purchaseDate?.millisecondsSince1970,
                        start <= customer.now
                    else { return nil }
                    return t.expiresDate?.millisecondsSince1970
                }.max()
                if let latest,
                    !customer.facts.contains(where: {
                        if case .transaction(let t) = $0, t.originalTransactionId == subscription.originalTransactionId,
                            t.revocationDate != nil || t.isUpgraded == true
                        {
                            return true
                        }
                        return false
                    })
                {
                    #expect(subscription.expiresDate?.millisecondsSince1970 == latest, "seed \(seed)")
                }
            }
        }
    }

    @Test("The state is constant on [t, nextChangeAt), and changes at nextChangeAt")
    func constantUntilNextChange() async {
        await propertyCheck(count: 300, input: Self.seeds) { seed in
            let customer = RandomCustomer(seed: seed)
            var rng = SeededGenerator(state: seed &+ 2)
            let state = evaluate(customer.facts, at: customer.now).state
            let horizon = state.nextChangeAt?.millisecondsSince1970 ?? customer.now + 1000 * day
            for _ in 0..<4 {
                let probe = rng.int(customer.now...(horizon - 1))
                #expect(evaluate(customer.facts, at: probe).state == state, "seed \(seed) at \(probe)")
            }
            if let next = state.nextChangeAt?.millisecondsSince1970 {
                var later = evaluate(customer.facts, at: next).state
                var now = state
                later.nextChangeAt = nil
                now.nextChangeAt = nil
                #expect(later != now, "seed \(seed): nothing changes at nextChangeAt \(next)")
            }
        }
    }

    @Test("No access exists without a fact")
    func noAccessWithoutFacts() async {
        await propertyCheck(count: 300, input: Self.seeds) { seed in
            let customer = RandomCustomer(seed: seed)
            let state = evaluate(customer.facts, at: customer.now).state
            let bought = Set(
                customer.facts.compactMap { fact -> String? in
                    guard case .transaction(let t) = fact, let start = t.purchaseDate?.millisecondsSince1970, start <= customer.now
                    else { return nil }
                    return t.productId
                })
            for (id, access) in state.entitlements where access.active {
                let source = access.productId ?? ""
                #expect(bought.contains(source), "seed \(seed): \(id) from \(source), never bought")
                #expect(testCatalog[source]?.entitlements.contains(id) == true, "seed \(seed): \(source) does not unlock \(id)")
            }
            for (product, access) in state.products where access.active {
                #expect(bought.contains(product), "seed \(seed)")
            }
            if let earliest = customer.earliestPurchase {
                let before = evaluate(customer.facts, at: earliest - 1).state
                #expect(before.state == .new, "seed \(seed)")
                #expect(before.entitlements.values.allSatisfy { !$0.active }, "seed \(seed)")
            }
            let none = evaluate(customer.facts.filter { if case .transaction = $0 { return false } else { return true } }, at: customer.now)
            #expect(
                none.state.entitlements.values.allSatisfy { !$0.active },
                "seed \(seed): renewal infos and notifications alone grant nothing")
        }
    }
}
