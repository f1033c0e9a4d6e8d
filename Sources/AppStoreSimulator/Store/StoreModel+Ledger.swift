import AppStore

/// What the fake App Store Server API reads: a customer's transactions and the statuses of their subscriptions.
extension StoreModel {
    /// The customer who made (or was shared) a transaction.
    func owner(ofTransaction id: String) -> String? {
        if let once = oneTime[id] { return once.customer }
        guard let original = transactions[id]?.value.originalTransactionId else { return nil }
        return subscriptions[original]?.customer
    }

    public func originalTransactionId(of id: String) -> String? {
        transactions[id]?.value.originalTransactionId
    }

    /// Get Transaction History: every transaction of the customer behind `id`, latest versions, by purchase date.
    public func history(ofTransaction id: String) -> [String]? {
        guard let customer = owner(ofTransaction: id) else { return nil }
        let ids = subscriptions(of: customer).flatMap { $0.periods.map(\.transactionId) } + (customers[customer]?.purchaseIds ?? [])
        return ids.compactMap { transactions[$0] }
            .sorted {
                ($0.value.purchaseDate?.millisecondsSince1970 ?? 0, $0.value.transactionId ?? "") < (
                    $1.value.purchaseDate?.millisecondsSince1970 ?? 0, $1.value.transactionId ?? ""
                )
            }
            .map(\.jws)
    }

    public struct StatusItem: Sendable {
        public var status: SubscriptionStatus
        public var originalTransactionId: String
        /// The latest transaction's id, and its JWS.
        public var transactionId: String
        public var transaction: String
        public var renewalInfo: String
    }

    /// Get All Subscription Statuses: each of the customer's subscriptions by group, with its latest transaction and
    /// a renewal info signed now.
    public func statuses(ofTransaction id: String) throws -> [(group: String, items: [StatusItem])]? {
        guard let customer = owner(ofTransaction: id) else { return nil }
        return try statuses(ofCustomer: customer)
    }

    /// The statuses of the subscriptions of the customer named `customer`, by group (empty for a stranger).
    public func statuses(ofCustomer customer: String) throws -> [(group: String, items: [StatusItem])] {
        var groups: [(group: String, items: [StatusItem])] = []
        for s in subscriptions(of: customer) {
            guard let latest = transactions[s.last.transactionId] else { continue }
            let original = s.originalTransactionId
            let item = StatusItem(
                status: Self.notificationStatus(s.status), originalTransactionId: original, transactionId: s.last.transactionId,
                transaction: latest.jws,
                renewalInfo: try ca.sign(renewalPayload(s, signedAt: now)))
            if let index = groups.firstIndex(where: { $0.group == s.group }) {
                groups[index].items.append(item)
            } else {
                groups.append((s.group, [item]))
            }
        }
        return groups
    }
}
