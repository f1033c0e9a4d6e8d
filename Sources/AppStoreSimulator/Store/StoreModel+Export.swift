/// One simulated customer as another system would know it: the app user id the server names it by, and the ids Apple
/// knows its purchases by (original transaction ids of its subscriptions, transaction ids of its one-time purchases).
public struct CustomerIds: Hashable, Sendable {
    /// The simulator's own name (`c1`).
    public var name: String
    public var appUserId: String
    public var transactionIds: [String]
}

extension StoreModel {
    /// Every customer that bought something, in the order they arrived.
    public func customerIds() -> [CustomerIds] {
        customerNames.compactMap { name in
            guard let appUserId = appUserId(of: name), let customer = customers[name] else { return nil }
            let ids = customer.subscriptionIds + customer.purchaseIds
            return ids.isEmpty ? nil : CustomerIds(name: name, appUserId: appUserId, transactionIds: ids)
        }
    }

    /// The customers as a plain CSV, `app_user_id,transaction_id`, one line per purchase (the import format that maps
    /// an app user id to what Apple knows).
    public func customerIdsCSV() -> String {
        (["app_user_id,transaction_id"]
            + customerIds().flatMap { customer in customer.transactionIds.map { "\(customer.appUserId),\($0)" } })
            .joined(separator: "\n") + "\n"
    }
}
