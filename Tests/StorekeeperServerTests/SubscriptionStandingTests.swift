import AppStore
import Entitlements
import TestSupport
import Testing

@testable import StorekeeperCore

/// The subscription a message's customer properties stand by (RevenueCat's `rc_subscription_status` is the customer's,
/// sent with every event, a one-time purchase's too).
@Suite("The subscription an event's customer stands by")
struct SubscriptionStandingTests {
    func state(_ transactions: [JWSTransactionDecodedPayload], atDay day: Double) -> CustomerState {
        EntitlementEngine.state(catalog: TestCatalogs.full, facts: transactions.map(Fact.transaction), now: ts(day))
    }

    @Test("the event's own subscription; else the one giving access; else the latest to end; none for a customer who never subscribed")
    func standing() throws {
        let lapsed = Payloads.transaction("old", product: "plus.monthly", purchase: at(0), expires: at(30))
        let current = Payloads.transaction("new", product: "pro.monthly", purchase: at(40), expires: at(70))
        let lifetime = Payloads.transaction("life", product: "lifetime", purchase: at(45), expires: nil)
        let both = state([lapsed, current, lifetime], atDay: 50)
        #expect(OutboundEvents.standing(of: "old", in: both)?.originalTransactionId == "old")
        #expect(OutboundEvents.standing(of: "life", in: both)?.originalTransactionId == "new")
        #expect(OutboundEvents.standing(of: nil, in: both)?.originalTransactionId == "new")
        // Both lapsed: the one that ended last.
        let later = state([lapsed, current, lifetime], atDay: 200)
        #expect(OutboundEvents.standing(of: "life", in: later)?.originalTransactionId == "new")
        #expect(OutboundEvents.standing(of: "life", in: state([lifetime], atDay: 50)) == nil)
    }
}
