import Foundation

/// A purchase waiting to reach the server.
struct QueuedPurchase: Sendable, Codable, Hashable {
    var transaction: StoreTransaction
    /// Who bought it: the app user id when the store handed the transaction over.
    var appUserId: String
    /// The same on every retry, so the server can tell a retry from a new post.
    var idempotencyKey: String
    /// Whether the store waits for `finish()` (a purchase, an update); a restore posts finished transactions too.
    var finishes: Bool
    var attempts: Int = 0
}

/// The purchases the server has not accepted yet, on disk before anything else happens to them: a purchase made just
/// before the app was killed is posted at the next launch. One post of a transaction at a time.
actor PurchaseQueue {
    private let storage: any KeyValueStorage
    private var items: [QueuedPurchase]
    private var inFlight: Set<String> = []
    private var draining = false
    private var drainAgain = false
    /// Failed attempts in a row (for the backoff), and whether a retry is scheduled.
    private(set) var failuresInARow = 0
    private var retryScheduled = false

    init(storage: any KeyValueStorage) {
        self.storage = storage
        self.items =
            storage.data(forKey: StorageKeys.purchaseQueue).flatMap { try? JSONDecoder().decode([QueuedPurchase].self, from: $0) } ?? []
    }

    var pending: [QueuedPurchase] { items }

    func hasPending(for appUserId: String) -> Bool { items.contains { $0.appUserId == appUserId } }

    /// Adds a transaction (once: a transaction already queued keeps its key and owner) and writes the queue to disk.
    @discardableResult
    func add(_ transaction: StoreTransaction, appUserId: String, finishes: Bool) throws -> QueuedPurchase {
        if let index = items.firstIndex(where: { $0.transaction.id == transaction.id }) {
            if finishes, !items[index].finishes {
                items[index].finishes = true
                try save()
            }
            return items[index]
        }
        let item = QueuedPurchase(
            transaction: transaction, appUserId: appUserId, idempotencyKey: "txn-\(transaction.id)-\(UUID().uuidString.lowercased())",
            finishes: finishes)
        items.append(item)
        try save()
        return item
    }

    /// Claims a transaction for one post; false when another post of it is under way or it is done.
    func begin(_ id: String) -> QueuedPurchase? {
        guard !inFlight.contains(id), let item = items.first(where: { $0.transaction.id == id }) else { return nil }
        inFlight.insert(id)
        return item
    }

    /// The server accepted it, or refused it for good: off the queue. Returns whether it was still there.
    func complete(_ id: String) throws -> Bool {
        inFlight.remove(id)
        guard let index = items.firstIndex(where: { $0.transaction.id == id }) else { return false }
        items.remove(at: index)
        failuresInARow = 0
        try save()
        return true
    }

    /// A post that may succeed later: the transaction stays queued.
    func release(_ id: String) {
        inFlight.remove(id)
        if let index = items.firstIndex(where: { $0.transaction.id == id }) { items[index].attempts += 1 }
        failuresInARow += 1
        try? save()
    }

    /// Whether this caller should drain now (no other drain runs); otherwise the running drain goes round once more.
    func startDraining() -> Bool {
        if draining {
            drainAgain = true
            return false
        }
        draining = true
        return true
    }

    /// Ends a drain; true when another was asked for meanwhile (the caller goes round again).
    func finishDraining() -> Bool {
        if drainAgain {
            drainAgain = false
            return true
        }
        draining = false
        return false
    }

    /// Marks a retry as scheduled; false when one is already.
    func scheduleRetry() -> Bool {
        guard !retryScheduled else { return false }
        retryScheduled = true
        return true
    }

    func retryStarted() { retryScheduled = false }

    private func save() throws {
        try storage.set(try JSONEncoder().encode(items), forKey: StorageKeys.purchaseQueue)
    }
}
