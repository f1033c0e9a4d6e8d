import Foundation

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

/// The formats `--export-ids` writes: the plain import CSV, and the shapes of RevenueCat's and Apphud's exports.
public enum CustomerIdsFormat: String, Sendable, CaseIterable {
    case plain, revenuecat, apphud
}

extension StoreModel {
    /// One purchase of a customer as an export lists it.
    struct ExportedTransaction {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var purchaseDate: Int64
        var subscription: Bool
    }

    /// Every transaction of a customer (each period of each subscription, each one-time purchase), oldest first.
    func exportedTransactions(of name: String) -> [ExportedTransaction] {
        let ids = subscriptions(of: name).flatMap { $0.periods.map(\.transactionId) } + (customers[name]?.purchaseIds ?? [])
        return ids.compactMap { id in
            guard let t = transactions[id]?.value, let original = t.originalTransactionId, let product = t.productId else { return nil }
            return ExportedTransaction(
                transactionId: id, originalTransactionId: original, productId: product,
                purchaseDate: t.purchaseDate?.millisecondsSince1970 ?? 0, subscription: t.expiresDate != nil)
        }.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    /// The customers in `format`.
    public func customerIds(as format: CustomerIdsFormat) -> String {
        switch format {
        case .plain: customerIdsCSV()
        case .revenuecat: customerIdsRevenueCatCSV()
        case .apphud: customerIdsApphudLines()
        }
    }

    /// RevenueCat's Scheduled Data Export (its transactions feed's columns that name customers and purchases): one line
    /// per transaction. The original app user id is RevenueCat's anonymous one, the last seen alias the app's id (a
    /// customer the server named itself is anonymous in both).
    public func customerIdsRevenueCatCSV() -> String {
        var lines = [
            "rc_original_app_user_id,rc_last_seen_app_user_id_alias,product_identifier,start_time,store,is_sandbox,store_transaction_id,original_store_transaction_id"
        ]
        let sandbox = app.environment == .production ? "false" : "true"
        for customer in customerIds() {
            var hash = StableHash()
            hash.add(customer.name)
            let anonymous = "$RCAnonymousID:" + hash.hex
            let alias = customer.appUserId.hasPrefix("$") ? anonymous : customer.appUserId
            for t in exportedTransactions(of: customer.name) {
                let start = Date(timeIntervalSince1970: Double(t.purchaseDate) / 1000).formatted(.iso8601)
                lines.append(
                    "\(anonymous),\(alias),\(t.productId),\(start),app_store,\(sandbox),\(t.transactionId),\(t.originalTransactionId)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Apphud's Customers API answers, one JSON line per customer: `user_id`, its App Store subscriptions (original
    /// transaction ids) and one-time purchases.
    public func customerIdsApphudLines() -> String {
        let environment = app.environment == .production ? "production" : "sandbox"
        var lines: [String] = []
        for customer in customerIds() {
            let all = exportedTransactions(of: customer.name)
            var subscriptions: [[String: Any]] = []
            var seen: Set<String> = []
            for t in all where t.subscription && seen.insert(t.originalTransactionId).inserted {
                subscriptions.append([
                    "original_transaction_id": t.originalTransactionId, "product_id": t.productId, "environment": environment,
                    "store": "app_store",
                ])
            }
            let purchases: [[String: Any]] = all.filter { !$0.subscription }.map {
                ["transaction_id": $0.transactionId, "product_id": $0.productId, "environment": environment, "store": "app_store"]
            }
            let answer: [String: Any] = [
                "data": ["results": ["user_id": customer.appUserId, "subscriptions": subscriptions, "purchases": purchases]]
            ]
            if let data = try? JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys, .withoutEscapingSlashes]) {
                lines.append(String(decoding: data, as: UTF8.self))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// FNV-1a over text: the same in every process (Swift's `Hasher` is seeded per process).
public struct StableHash: Sendable {
    public var value: UInt64 = 0xcbf2_9ce4_8422_2325
    public init() {}
    public mutating func add(_ text: String) {
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x100_0000_01b3
        }
    }
    public var hex: String { String(value, radix: 16) }
}
