import AppStore
import Foundation
import TestSupport
import Testing

@testable import Entitlements

/// The seeds' scenarios, one readable story each. Days count from 2026-01-01.
@Suite("Scenarios")
struct ScenarioTests {
    @Test("A refund keeps the expiry unchanged, and the revocation wins")
    func refundWithUnchangedExpiry() {
        let bought = transaction("100", start: 0, expires: 31)
        let refunded = transaction("100", start: 0, expires: 31, signed: 10, revoked: 10)
        for facts in [[Fact.transaction(bought), .transaction(refunded)], [.transaction(refunded), .transaction(bought)]] {
            let before = evaluate(facts, atDay: 5)
            #expect(before.state.state == .active)
            #expect(before.state.entitlements["pro"]?.active == true)

            let after = evaluate(facts, atDay: 11)
            #expect(after.subscription?.status == .revoked)
            #expect(after.subscription?.expiresDate == ts(31), "the expiry is kept as Apple sent it")
            #expect(after.subscription?.revocation == Revocation(date: ts(10), reason: .appIssue, type: .full))
            #expect(after.state.entitlements["pro"]?.active == false)
            #expect(after.state.state == .inactive)
            #expect(after.types == [.subscriptionStarted, .refunded])
            #expect(after.events(.refunded).first?.reason == "appIssue")
            #expect(after.events(.refunded).first?.effectiveAt == ts(10))
            #expect(after.events(.subscriptionExpired).isEmpty, "a refund is not also an expiry")
        }
    }

    @Test("Billing retry with a grace period, ending in recovery")
    func billingRetryWithGraceRecovers() {
        var facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 31)),
            .renewalInfo(renewal("1", signed: 31, billingRetry: true, graceEnds: 47)),
            .notification(notification(.didFailToRenew, .gracePeriod, uuid: "fail", signed: 31, original: "1", transaction: "1")),
        ]
        let inGrace = evaluate(facts, atDay: 35)
        #expect(inGrace.subscription?.status == .gracePeriod)
        #expect(inGrace.state.billingIssue)
        #expect(
            inGrace.state.entitlements["pro"]
                == AccessState(active: true, expiresDate: ts(47), productId: "pro.monthly", transactionId: "1"))
        #expect(inGrace.state.nextChangeAt == ts(47))

        let retrying = evaluate(facts, atDay: 50)
        #expect(retrying.subscription?.status == .billingRetry)
        #expect(retrying.state.state == .active, "billing retry still counts as an active customer")
        #expect(retrying.state.billingIssue)
        #expect(retrying.state.entitlements["pro"]?.active == false, "no access once the grace period is over")
        #expect(retrying.subscription?.billingRetryEndsAt == ts(91))

        facts += [
            .transaction(transaction("2", original: "1", start: 52, expires: 83, reason: .renewal)),
            .renewalInfo(renewal("1", signed: 52)),
            .notification(notification(.didRenew, .billingRecovery, uuid: "recovered", signed: 52, original: "1", transaction: "2")),
        ]
        let recovered = evaluate(facts, atDay: 55)
        #expect(recovered.subscription?.status == .active)
        #expect(!recovered.state.billingIssue)
        #expect(recovered.state.entitlements["pro"]?.expiresDate == ts(83))
        #expect(
            recovered.types == [
                .subscriptionStarted, .billingIssue, .gracePeriodStarted, .gracePeriodExpired, .billingRecovered, .subscriptionRenewed,
            ])
        #expect(recovered.events(.billingIssue).first?.effectiveAt == ts(31))
        #expect(recovered.events(.gracePeriodExpired).first?.effectiveAt == ts(47))
        #expect(recovered.events(.billingRecovered).first?.effectiveAt == ts(52))
    }

    @Test("Billing retry without a grace period: no access while Apple retries, then recovery")
    func billingRetryWithoutGrace() {
        var facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 31)),
            .renewalInfo(renewal("1", signed: 31, billingRetry: true)),
        ]
        let retrying = evaluate(facts, atDay: 33)
        #expect(retrying.subscription?.status == .billingRetry)
        #expect(retrying.state.entitlements["pro"]?.active == false)
        #expect(retrying.state.billingIssue)
        #expect(retrying.types == [.subscriptionStarted, .billingIssue])

        let gaveUp = evaluate(facts, atDay: 95)
        #expect(gaveUp.subscription?.status == .expired, "Apple retries for 60 days at most")
        #expect(gaveUp.subscription?.expirationReason == .billingError)
        #expect(gaveUp.events(.subscriptionExpired).first?.effectiveAt == ts(91))
        #expect(gaveUp.events(.subscriptionExpired).first?.reason == "billingError")

        facts.append(.transaction(transaction("2", original: "1", start: 40, expires: 71, reason: .renewal)))
        let recovered = evaluate(facts, atDay: 45)
        #expect(recovered.subscription?.status == .active)
        #expect(recovered.types == [.subscriptionStarted, .billingIssue, .billingRecovered, .subscriptionRenewed])
        #expect(recovered.events(.gracePeriodStarted).isEmpty)
    }

    @Test("Trial, converted, auto-renew off, expired, resubscribed")
    func trialLifecycle() {
        let facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 7, period: .trial)),
            .transaction(transaction("2", original: "1", start: 7, expires: 38, reason: .renewal)),
            .notification(
                notification(.didChangeRenewalStatus, .autoRenewDisabled, uuid: "off", signed: 20, original: "1", transaction: "2")),
            .renewalInfo(renewal("1", signed: 38, autoRenew: false, intent: .customerCancelled)),
            .transaction(transaction("3", original: "1", start: 50, expires: 81, reason: .purchase)),
        ]
        let trial = evaluate(facts, atDay: 3)
        #expect(trial.subscription?.periodType == .trial)
        #expect(trial.state.introEligibility["pro"]?.eligible == false)
        #expect(trial.state.introEligibility["plus"]?.eligible == true, "eligibility is per group")
        #expect(trial.state.nextChangeAt == ts(7))

        let canceled = evaluate(facts, atDay: 25)
        #expect(canceled.subscription?.status == .active)
        #expect(canceled.subscription?.willRenew == false)

        let lapsed = evaluate(facts, atDay: 45)
        #expect(lapsed.subscription?.status == .expired)
        #expect(lapsed.subscription?.expirationReason == .voluntary)
        #expect(lapsed.state.state == .inactive)
        #expect(lapsed.state.winBackEligibility["pro"] == WinBackEligibility(eligible: true, lapsedAt: ts(38), offerIds: []))

        let back = evaluate(facts, atDay: 60)
        #expect(back.subscription?.status == .active)
        #expect(back.subscription?.willRenew == true, "a resubscription starts with auto-renew on")
        #expect(back.state.winBackEligibility["pro"]?.eligible == false)
        #expect(back.types == [.trialStarted, .trialConverted, .subscriptionCanceled, .subscriptionExpired, .subscriptionResubscribed])
        #expect(back.events(.subscriptionExpired).first?.reason == "voluntary")
        #expect(back.events(.subscriptionExpired).first?.effectiveAt == ts(38))
        #expect(back.events(.trialStarted).first?.price == 0)
        #expect(back.events(.trialConverted).first?.price == 9990)
    }

    @Test("Auto-renew off during the trial is a trial cancellation, then the trial expires")
    func trialCanceled() {
        let facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 7, period: .trial)),
            .renewalInfo(renewal("1", signed: 2, autoRenew: false)),
        ]
        let result = evaluate(facts, atDay: 10)
        #expect(result.types == [.trialStarted, .trialCanceled, .trialExpired])
        #expect(result.events(.trialExpired).first?.reason == "voluntary")
        #expect(result.state.introEligibility["pro"]?.eligible == false)
    }

    @Test("An upgrade mid-period takes over at once; the old period grants nothing")
    func upgradeMidPeriod() {
        let facts: [Fact] = [
            .transaction(transaction("1", product: "pro.monthly", start: 0, expires: 31)),
            .transaction(transaction("1", product: "pro.monthly", start: 0, expires: 31, signed: 10, upgraded: true)),
            .transaction(transaction("2", original: "1", product: "pro.yearly", start: 10, expires: 375, reason: .purchase)),
        ]
        let result = evaluate(facts, atDay: 12)
        #expect(result.state.subscriptions.count == 1)
        #expect(result.subscription?.productId == "pro.yearly")
        #expect(result.subscription?.status == .active)
        #expect(result.state.products["pro.monthly"]?.active == false)
        #expect(result.state.products["pro.yearly"]?.active == true)
        #expect(result.state.entitlements["pro"]?.expiresDate == ts(375))
        let change = result.events(.productChanged).first
        #expect(change?.reason == "upgrade")
        #expect(change?.fromProductId == "pro.monthly")
        #expect(change?.effectiveAt == ts(10))
        #expect(result.events(.subscriptionExpired).isEmpty)
    }

    @Test("An upgraded subscription with its own original transaction no longer grants access")
    func upgradedChain() {
        let facts: [Fact] = [
            .transaction(transaction("1", product: "pro.monthly", start: 0, expires: 31, signed: 10, upgraded: true)),
            .transaction(transaction("2", product: "pro.yearly", start: 10, expires: 375)),
        ]
        let result = evaluate(facts, atDay: 12)
        let old = result.state.subscriptions.first { $0.originalTransactionId == "1" }
        #expect(old?.status == .expired)
        #expect(old?.isUpgraded == true)
        #expect(result.state.groups["pro"]?.originalTransactionId == "2")
    }

    @Test("A pending downgrade shows as the product it renews into, then takes effect at renewal")
    func pendingDowngrade() {
        var facts: [Fact] = [
            .transaction(transaction("1", product: "pro.yearly", start: 0, expires: 365)),
            .renewalInfo(renewal("1", product: "pro.yearly", signed: 100, next: "pro.monthly")),
            .notification(notification(.didChangeRenewalPref, .downgrade, uuid: "pref", signed: 100, original: "1", transaction: "1")),
        ]
        let pending = evaluate(facts, atDay: 200)
        #expect(pending.subscription?.productId == "pro.yearly")
        #expect(pending.subscription?.autoRenewProductId == "pro.monthly")
        #expect(pending.subscription?.willRenew == true)
        #expect(pending.events(.productChanged).isEmpty, "nothing changed yet")

        facts.append(.transaction(transaction("2", original: "1", product: "pro.monthly", start: 365, expires: 396, reason: .renewal)))
        let renewed = evaluate(facts, atDay: 370)
        #expect(renewed.subscription?.productId == "pro.monthly")
        #expect(renewed.subscription?.autoRenewProductId == nil)
        #expect(renewed.events(.productChanged).first?.reason == "downgrade")
        #expect(renewed.events(.subscriptionRenewed).count == 1)
    }

    @Test("A non-renewing pass lasts the catalog's year")
    func nonRenewingPass() {
        let facts: [Fact] = [.transaction(transaction("9", product: "pass.year", start: 0))]
        let during = evaluate(facts, atDay: 364)
        #expect(during.state.entitlements["pass"]?.active == true)
        #expect(during.state.entitlements["pass"]?.expiresDate == ts(365))
        #expect(during.state.nextChangeAt == ts(365), "2026 is not a leap year: one year is 365 days")
        #expect(during.state.state == .active)
        #expect(during.types == [.nonRenewingPurchase])

        let after = evaluate(facts, atDay: 365)
        #expect(after.state.entitlements["pass"]?.active == false)
        #expect(after.state.state == .inactive)
        #expect(after.state.nextChangeAt == nil)
    }

    @Test("Family sharing, then the family revokes access")
    func familySharingRevoked() {
        let shared = transaction("50", product: "lifetime", start: 0, ownership: .familyShared)
        let revoked = transaction(
            "50", product: "lifetime", start: 0, signed: 20, revoked: 20, revocationType: .familyRevoke, ownership: .familyShared)
        let subscription = transaction("60", product: "plus.monthly", start: 0, expires: 31, ownership: .familyShared)
        let facts: [Fact] = [.transaction(shared), .transaction(revoked), .transaction(subscription)]

        let before = evaluate(facts, atDay: 10)
        #expect(before.state.entitlements["pro"]?.active == true)
        #expect(before.state.entitlements["pro"]?.expiresDate == nil, "a non-consumable does not end")
        #expect(before.state.nonSubscriptions.first?.ownership == .familyShared)
        #expect(before.state.subscriptions.first?.ownership == .familyShared)
        #expect(before.state.nextChangeAt == ts(20))

        let after = evaluate(facts, atDay: 25)
        #expect(after.state.entitlements["pro"]?.active == false)
        #expect(after.state.nonSubscriptions.first?.active == false)
        #expect(after.state.nonSubscriptions.first?.revocation?.type == .familyRevoke)
        #expect(after.events(.familyAccessRevoked).count == 1)
        #expect(after.events(.refunded).isEmpty)
    }

    @Test("The same purchase through a legacy receipt and through JWS gives one state")
    func receiptAndJWSAgree() {
        let jws = transaction("1000000001", start: 0, expires: 31, period: .trial, signed: 0)
        var entry = InAppPurchaseReceipt()
        entry.productId = "pro.monthly"
        entry.transactionId = "1000000001"
        entry.originalTransactionId = "1000000001"
        entry.purchaseDate = ts(0)
        entry.originalPurchaseDate = ts(0)
        entry.expiresDate = ts(31)
        entry.isTrialPeriod = true
        var receipt = AppReceipt()
        receipt.bundleId = "com.example"
        receipt.receiptType = "Production"
        receipt.receiptCreationDate = ts(1)
        receipt.inApp = [entry]

        let fromReceipt = Fact.facts(of: receipt)
        let jwsOnly = evaluate([.transaction(jws)], atDay: 5)
        let receiptOnly = evaluate(fromReceipt, atDay: 5)
        let both = evaluate(fromReceipt + [.transaction(jws)], atDay: 5)

        #expect(both.state.subscriptions.count == 1)
        #expect(both.state == jwsOnly.state, "the receipt adds nothing the signed transaction did not say")
        #expect(both.events == jwsOnly.events)
        #expect(receiptOnly.subscription?.status == jwsOnly.subscription?.status)
        #expect(receiptOnly.subscription?.expiresDate == jwsOnly.subscription?.expiresDate)
        #expect(receiptOnly.subscription?.periodType == .trial)
        #expect(receiptOnly.state.introEligibility["pro"]?.eligible == false)
    }

    @Test("A receipt's cancellation date is a revocation")
    func receiptCancellation() {
        var entry = InAppPurchaseReceipt()
        entry.productId = "lifetime"
        entry.transactionId = "7"
        entry.purchaseDate = ts(0)
        entry.cancellationDate = ts(3)
        entry.cancellationReason = "1"
        let fact = JWSTransactionDecodedPayload(receiptEntry: entry)
        #expect(fact.revocationDate == ts(3))
        #expect(fact.revocationReason == .appIssue)
        let result = evaluate([.transaction(fact)], atDay: 4)
        #expect(result.state.entitlements["pro"]?.active == false)
        #expect(result.types == [.nonConsumablePurchase, .refunded])
    }

    @Test("A refund reversed: the later version without revocation restores access")
    func refundReversed() {
        let facts: [Fact] = [
            .transaction(transaction("5", product: "lifetime", start: 0, signed: 0)),
            .transaction(transaction("5", product: "lifetime", start: 0, signed: 10, revoked: 10)),
            .transaction(transaction("5", product: "lifetime", start: 0, signed: 15)),
            .notification(notification(.refundReversed, uuid: "rr", signed: 15, original: "5", transaction: "5")),
        ]
        let result = evaluate(facts, atDay: 20)
        #expect(result.state.entitlements["pro"]?.active == true)
        #expect(result.types == [.nonConsumablePurchase, .refunded, .refundReversed])
    }

    @Test("No facts: a new customer, eligible for every introductory offer, with nothing to wait for")
    func newCustomer() {
        let result = evaluate([], atDay: 0)
        #expect(result.state.state == .new)
        #expect(result.state.entitlements.values.allSatisfy { !$0.active })
        #expect(Set(result.state.entitlements.keys) == ["pro", "plus", "pass"])
        #expect(result.state.introEligibility["pro"]?.eligible == true)
        #expect(result.state.nextChangeAt == nil)
        #expect(result.events.isEmpty)
    }

    @Test("Consumables are listed, and make nobody a subscriber")
    func consumables() {
        let result = evaluate([.transaction(transaction("c1", product: "coins", start: 0))], atDay: 1)
        #expect(result.state.nonSubscriptions.first?.active == nil)
        #expect(result.state.state == .new)
        #expect(result.types == [.consumablePurchase])
    }

    @Test("Paid introductory periods: started, renewed, converted")
    func introPeriods() {
        let facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 31, period: .intro, price: 990)),
            .transaction(transaction("2", original: "1", start: 31, expires: 59, period: .intro, reason: .renewal, price: 990)),
            .transaction(transaction("3", original: "1", start: 59, expires: 90, reason: .renewal)),
        ]
        #expect(evaluate(facts, atDay: 60).types == [.introStarted, .introRenewed, .introConverted])
    }

    @Test("A notification for a transaction not among the facts still yields its event")
    func notificationOnly() {
        let facts: [Fact] = [
            .notification(notification(.didFailToRenew, uuid: "f", signed: 3, original: "77", transaction: "78"))
        ]
        let result = evaluate(facts, atDay: 4)
        #expect(result.types == [.billingIssue])
        #expect(result.state.state == .new, "a notification alone grants nothing")
    }

    @Test("Environments can be kept apart")
    func environments() {
        let facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 31, environment: .sandbox))
        ]
        #expect(EntitlementEngine.state(catalog: testCatalog, facts: facts, now: ts(1)).state == .active)
        #expect(EntitlementEngine.state(catalog: testCatalog, facts: facts, now: ts(1), environment: .production).state == .new)
    }
}

@Suite("Prepared customers")
struct PreparedCustomerTests {
    @Test("A prepared customer evaluated at several instants agrees with evaluating from scratch")
    func preparedAgrees() {
        let facts: [Fact] = [
            .transaction(transaction("1", start: 0, expires: 7, period: .trial)),
            .transaction(transaction("2", original: "1", start: 7, expires: 38, reason: .renewal)),
            .renewalInfo(renewal("1", signed: 38, billingRetry: true, graceEnds: 44)),
        ]
        let prepared = PreparedCustomer(catalog: testCatalog, facts: facts)
        for day in [-1, 0, 3, 7, 20, 38, 40, 44, 50, 97, 100] as [Int64] {
            #expect(prepared.evaluate(at: ts(Double(day))) == evaluate(facts, atDay: day), "day \(day)")
        }
    }
}

@Suite("Hostile input")
struct HostileInputTests {
    @Test("Instants at the ends of Int64 neither trap nor grant access they should not")
    func extremeInstants() {
        let extremes: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        for start in extremes {
            for end in extremes {
                var t = transaction("x", start: 0, expires: 1)
                t.purchaseDate = Timestamp(millisecondsSince1970: start)
                t.expiresDate = Timestamp(millisecondsSince1970: end)
                var pass = transaction("p", product: "pass.year", start: 0)
                pass.purchaseDate = Timestamp(millisecondsSince1970: start)
                var renewal = transaction("y", original: "x", start: 0, expires: 1, reason: nil)
                renewal.purchaseDate = Timestamp(millisecondsSince1970: end)
                renewal.expiresDate = Timestamp(millisecondsSince1970: start)
                let facts: [Fact] = [.transaction(t), .transaction(pass), .transaction(renewal)]
                for now in extremes {
                    let result = evaluate(facts, at: now)
                    if let subscription = result.state.subscriptions.first, subscription.grantsAccess {
                        #expect(
                            subscription.purchaseDate.millisecondsSince1970 <= now, "access before its purchase (\(start), \(end), \(now))")
                        #expect(min(start, end) <= now)
                    }
                    if let next = result.state.nextChangeAt { #expect(next.millisecondsSince1970 > now) }
                }
            }
        }
    }
}

@Suite("Products the catalog does not list")
struct UnlistedProductTests {
    @Test("A receipt entry of an unlisted product with no type and no expiry grants nothing")
    func unlistedWithoutTypeGrantsNothing() {
        var entry = InAppPurchaseReceipt()
        entry.productId = "removed.product"
        entry.transactionId = "9"
        entry.purchaseDate = ts(0)
        let result = evaluate([.transaction(JWSTransactionDecodedPayload(receiptEntry: entry))], atDay: 1)
        #expect(result.state.state == .new, "an unknown one-time purchase must not make a customer active")
        #expect(result.state.products["removed.product"]?.active != true)
        #expect(result.state.nonSubscriptions.first?.active == nil)
    }

    @Test("An unlisted product whose transaction says what it is follows Apple's type")
    func unlistedWithTypeFollowsApple() {
        var t = transaction("8", product: "old.lifetime", start: 0)
        t.type = .nonConsumable
        let result = evaluate([.transaction(t)], atDay: 1)
        #expect(result.state.products["old.lifetime"]?.active == true)
        #expect(result.state.entitlements.values.allSatisfy { !$0.active }, "no catalog entry, no entitlement")
    }
}

@Suite("Encoding")
struct EncodingTests {
    @Test("A subscription's state encodes with grantsAccess and explicit nulls, and decodes back")
    func subscriptionRoundTrip() throws {
        let state = try #require(evaluate([.transaction(transaction("1", start: 0, expires: 31))], atDay: 3).subscription)
        let data = try JSONEncoder().encode(state)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["grantsAccess"] as? Bool == true)
        #expect(object["expirationReason"] is NSNull)
        #expect(try JSONDecoder().decode(SubscriptionState.self, from: data) == state)
    }
}
