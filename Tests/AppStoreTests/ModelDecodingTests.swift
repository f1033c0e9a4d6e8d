import AppStore
import Foundation
import Testing

/// Apple's exact payload shapes decode into the models, every documented field included.
@Suite struct ModelDecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(T.self, from: try Fixtures.data("payload-shapes/\(name).json"))
    }

    @Test func transaction() throws {
        let t = try decode(JWSTransactionDecodedPayload.self, "signedTransaction")
        #expect(t.transactionId == "23456")
        #expect(t.originalTransactionId == "12345")
        #expect(t.webOrderLineItemId == "34343")
        #expect(t.subscriptionGroupIdentifier == "55555")
        #expect(t.purchaseDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(t.originalPurchaseDate?.millisecondsSince1970 == 1_698_148_800_000)
        #expect(t.expiresDate?.millisecondsSince1970 == 1_698_149_000_000)
        #expect(t.quantity == 1)
        #expect(t.type == .autoRenewable)
        #expect(t.appAccountTokenUUID == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.revocationReason == .appIssue)
        #expect(t.revocationDate?.millisecondsSince1970 == 1_698_148_950_000)
        #expect(t.isUpgraded == true)
        #expect(t.offerType == .introductoryOffer)
        #expect(t.offerIdentifier == "abc.123")
        #expect(t.environment == .localTesting)
        #expect(t.transactionReason == .purchase)
        #expect(t.storefront == "USA")
        #expect(t.storefrontId == "143441")
        #expect(t.price == 10990)
        #expect(t.currency == "USD")
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.appTransactionId == "71134")
        #expect(t.offerPeriod == "P1Y")
        #expect(t.advancedCommerceInfo?.estimatedTax == 1500)
        #expect(t.advancedCommerceInfo?.items?.first?.refunds?.first?.refundAmount == 5000)
        #expect(t.advancedCommerceInfo?.items?.first?.SKU == "com.example.sku.premium")
        #expect(t.advancedCommerceInfo?.taxRate == "0.15")
        #expect(t.billingPlanType == "MONTHLY")
        #expect(t.commitmentInfo?.totalBillingPeriods == 12)
    }

    @Test func transactionWithRevocation() throws {
        let t = try decode(JWSTransactionDecodedPayload.self, "signedTransactionWithRevocation")
        #expect(t.revocationType == .refundProrated)
        #expect(t.revocationPercentage == 50000)
    }

    @Test func renewalInfo() throws {
        let r = try decode(JWSRenewalInfoDecodedPayload.self, "signedRenewalInfo")
        #expect(r.expirationIntent == .customerCancelled)
        #expect(r.autoRenewProductId == "com.example.product.2")
        #expect(r.autoRenewStatus == .on)
        #expect(r.isInBillingRetryPeriod == true)
        #expect(r.priceIncreaseStatus == .customerHasNotResponded)
        #expect(r.gracePeriodExpiresDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(r.offerType == .promotionalOffer)
        #expect(r.recentSubscriptionStartDate?.millisecondsSince1970 == 1_698_148_800_000)
        #expect(r.renewalDate?.millisecondsSince1970 == 1_698_148_850_000)
        #expect(r.renewalPrice == 9990)
        #expect(r.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(r.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(r.advancedCommerceInfo?.items?.first?.priceIncreaseInfo?.dependentSKUs?.count == 2)
        #expect(r.commitmentInfo?.commitmentAutoRenewStatus == .on)
        #expect(r.renewalBillingPlanType == "MONTHLY")
    }

    @Test func notifications() throws {
        let n = try decode(ResponseBodyV2DecodedPayload.self, "signedNotification")
        #expect(n.notificationType == .subscribed)
        #expect(n.subtype == .initialBuy)
        #expect(n.version == "2.0")
        #expect(n.data?.bundleVersion == "1.2.3")
        #expect(n.data?.status == .active)
        #expect(n.data?.appAppleId == 41234)

        let c = try decode(ResponseBodyV2DecodedPayload.self, "signedConsumptionRequestNotification")
        #expect(c.data?.consumptionRequestReason == .unintendedPurchase)

        let s = try decode(ResponseBodyV2DecodedPayload.self, "signedSummaryNotification")
        #expect(s.summary?.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(s.summary?.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(s.summary?.failedCount == 2)

        let e = try decode(ResponseBodyV2DecodedPayload.self, "signedExternalPurchaseTokenNotification")
        #expect(e.externalPurchaseToken?.externalPurchaseId == "b2158121-7af9-49d4-9561-1f588205523e")
        #expect(e.externalPurchaseToken?.environment == .production)
        let sandbox = try decode(ResponseBodyV2DecodedPayload.self, "signedExternalPurchaseTokenSandboxNotification")
        #expect(sandbox.externalPurchaseToken?.environment == .sandbox)

        let r = try decode(ResponseBodyV2DecodedPayload.self, "signedRescindConsentNotification")
        #expect(r.notificationType == .rescindConsent)
        #expect(r.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }

    @Test func appTransactionAndAppData() throws {
        let a = try decode(AppTransaction.self, "appTransaction")
        #expect(a.receiptType == .localTesting)
        #expect(a.appAppleId == 531412)
        #expect(a.versionExternalIdentifier == 512)
        #expect(a.preorderDate?.millisecondsSince1970 == 1_698_148_700_000)
        #expect(a.originalPlatform == .iOS)
        #expect(a.originalApplicationVersion == "1.1.2")
        let d = try decode(AppData.self, "appData")
        #expect(d.appAppleId == 987_654_321)
        #expect(d.environment == .sandbox)
    }

    @Test func encodingKeepsApplesFieldNamesAndValues() throws {
        let original = try Fixtures.data("payload-shapes/signedRenewalInfo.json")
        let decoded = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: original)
        let again = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: try JSONEncoder().encode(decoded))
        #expect(again == decoded)
        let object = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(decoded)) as? [String: Any])
        let source = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        #expect(Set(object.keys) == Set(source.keys))
    }

    @Test func unknownEnumValuesAreKept() throws {
        let json = Data(#"{"offerType": 9, "type": "Something Else", "environment": "Staging", "revocationType": "NEW"}"#.utf8)
        let t = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(t.offerType?.rawValue == 9)
        #expect(t.offerType?.isKnown == false)
        #expect(t.type?.rawValue == "Something Else")
        #expect(t.environment?.rawValue == "Staging")
        #expect(OfferType.winBackOffer.isKnown)
    }

    @Test func timestampsRejectNonsense() {
        for bad in [#"{"purchaseDate": 1e300}"#, #"{"purchaseDate": "1698148900000"}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(bad.utf8)) }
        }
    }
}
