import AppStore
import Foundation

extension StoreModel {
    /// The `{"signedPayload": …}` Apple posts to a Get Retention Message endpoint when the customer holding the
    /// subscription opens its cancellation screen: a ``DecodedRealtimeRequestBody`` signed like Apple's, for the
    /// subscription's current product, at the store's time. Nil for an original transaction that is no subscription.
    public func retentionRequest(originalTransactionId: String, userLocale: String = "en-US", requestIdentifier: UUID = UUID())
        throws -> String?
    {
        guard let subscription = subscriptions[originalTransactionId] else { return nil }
        var body = DecodedRealtimeRequestBody()
        body.originalTransactionId = originalTransactionId
        body.appAppleId = app.appAppleId
        body.productId = subscription.last.productId
        body.userLocale = userLocale
        body.requestIdentifier = requestIdentifier.uuidString.lowercased()
        body.environment = app.environment
        body.signedDate = Timestamp(millisecondsSince1970: now)
        return #"{"signedPayload":""# + (try ca.sign(body)) + #""}"#
    }

    /// The original transaction ids of the subscriptions a customer bought, sorted.
    public func subscriptionOriginalTransactionIds(of customer: String) -> [String] {
        subscriptions.values.filter { $0.customer == customer && $0.sharedFrom == nil }.map(\.originalTransactionId).sorted()
    }
}
