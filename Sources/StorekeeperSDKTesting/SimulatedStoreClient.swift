import AppStore
import AppStoreSimulator
import Foundation
import StorekeeperSDK

/// The App Store simulator behind the SDK's `StoreClient`: one device, signed in with the Apple ID of one simulator
/// customer. Purchases are signed like Apple's (by the simulator's CA), so a Storekeeper server that trusts that CA
/// verifies them as it would real ones; the notifications Apple would send are kept for the test to deliver.
///
/// Like StoreKit, it hands every transaction over until it is finished, and counts the finishes.
public final class SimulatedStoreClient: StoreClient {
    struct State {
        var model: StoreModel
        /// Every transaction handed to the app, by id.
        var handedOver: [String: StoreTransaction] = [:]
        var unfinished: [String: StoreTransaction] = [:]
        var finishCounts: [String: Int] = [:]
        var notifications: [SimulatedNotification] = []
        var listeners: [UUID: AsyncStream<StoreTransaction>.Continuation] = [:]
        var syncs = 0
        var nextOutcome: StorePurchaseOutcome?
    }

    /// The simulator customer signed in on this device.
    public let customer: String
    /// The version of the app on the device, and the version the customer first bought or downloaded.
    public let applicationVersion: String
    /// The version the customer first bought or downloaded (the app transaction's `originalAppVersion`).
    public let originalApplicationVersion: String
    /// When the customer first got the app (the store's time when this device was set up).
    public let originalPurchaseDate: Int64
    private let state: Locked<State>

    /// A store of `model`'s app, on the device of `customer` (added to the model if new), running
    /// `applicationVersion` of the app, first got at `originalApplicationVersion`.
    public init(
        model: StoreModel, customer: String = "device-owner", applicationVersion: String = "1.0", originalApplicationVersion: String? = nil
    ) throws {
        var model = model
        try model.addCustomer(customer, withToken: false)
        self.customer = customer
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion ?? applicationVersion
        self.originalPurchaseDate = model.now
        self.state = Locked(State(model: model))
    }

    /// The simulator's clock (milliseconds since 1970).
    public var now: Int64 { state.withLock { $0.model.now } }

    /// The model, for what a test checks against (ground truth, transactions).
    public var model: StoreModel { state.withLock { $0.model } }

    /// How many times the app finished a transaction.
    public func finishCount(_ transactionId: String) -> Int { state.withLock { $0.finishCounts[transactionId] ?? 0 } }

    /// How many times the app synced with the store (`AppStore.sync()`).
    public var syncCount: Int { state.withLock { $0.syncs } }

    /// The notifications Apple would have sent since the last call.
    public func takeNotifications() -> [SimulatedNotification] {
        state.withLock { state in
            defer { state.notifications = [] }
            return state.notifications
        }
    }

    /// The next purchase is cancelled, or left pending, instead of going through.
    public func setNextPurchaseOutcome(_ outcome: StorePurchaseOutcome?) { state.withLock { $0.nextOutcome = outcome } }

    /// Moves the store's time on: renewals happen (handed to the app as updates), expiries and billing retries.
    public func advance(to instant: Int64) throws {
        let updates = try state.withLock { state throws -> [StoreTransaction] in
            let before = Set(state.model.transactionOrder)
            state.notifications += try state.model.advance(to: instant)
            return Self.newTransactions(in: &state, since: before)
        }
        publish(updates)
    }

    /// Runs any other simulator action on the model (a refund, a cancellation …), keeping its notifications.
    public func perform(_ action: (inout StoreModel, String) throws -> [SimulatedNotification]) throws {
        let updates = try state.withLock { state throws -> [StoreTransaction] in
            let before = Set(state.model.transactionOrder)
            state.notifications += try action(&state.model, customer)
            return Self.newTransactions(in: &state, since: before)
        }
        publish(updates)
    }

    private func publish(_ updates: [StoreTransaction]) {
        let listeners = state.withLock { Array($0.listeners.values) }
        for update in updates { for listener in listeners { listener.yield(update) } }
    }

    /// The customer's transactions signed since `before`, handed over as unfinished.
    private static func newTransactions(in state: inout State, since before: Set<String>) -> [StoreTransaction] {
        let originals = Set(state.handedOver.values.map(\.originalId))
        var found: [StoreTransaction] = []
        for id in state.model.transactionOrder where !before.contains(id) {
            guard let signed = state.model.transactions[id], let original = signed.value.originalTransactionId,
                originals.contains(original) || state.model.originalTransactionId(of: id).map(originals.contains) == true
            else { continue }
            let transaction = StoreTransaction(
                id: id, originalId: original, productId: signed.value.productId ?? "", jwsRepresentation: signed.jws, verifiedByStore: true)
            state.handedOver[id] = transaction
            state.unfinished[id] = transaction
            found.append(transaction)
        }
        return found
    }

    // MARK: StoreClient

    /// Transactions as they happen on this device or elsewhere for the customer (renewals, other devices' purchases).
    public func transactionUpdates() -> AsyncStream<StoreTransaction> {
        let (stream, continuation) = AsyncStream<StoreTransaction>.makeStream()
        let id = UUID()
        state.withLock { $0.listeners[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) } }
        return stream
    }

    /// The transactions handed over and not finished yet.
    public func unfinishedTransactions() async -> [StoreTransaction] {
        state.withLock { state in state.unfinished.values.sorted { $0.id < $1.id } }
    }

    /// The latest transaction of every product the customer has now.
    public func currentEntitlements() async -> [StoreTransaction] {
        state.withLock { state in
            var latest: [String: (StoreTransaction, Int64)] = [:]
            for transaction in state.handedOver.values {
                guard let signed = state.model.transactions[transaction.id] else { continue }
                let payload = signed.value
                if payload.revocationDate != nil { continue }
                if let expires = payload.expiresDate?.millisecondsSince1970, expires <= state.model.now { continue }
                let purchased = payload.purchaseDate?.millisecondsSince1970 ?? 0
                let current = StoreTransaction(
                    id: transaction.id, originalId: transaction.originalId, productId: transaction.productId, jwsRepresentation: signed.jws,
                    verifiedByStore: true)
                if let known = latest[transaction.originalId], known.1 >= purchased { continue }
                latest[transaction.originalId] = (current, purchased)
            }
            return latest.values.map(\.0).sorted { $0.id < $1.id }
        }
    }

    /// Buys the product in the simulator (or answers the outcome set with `setNextPurchaseOutcome`).
    public func purchase(
        productId: String, appAccountToken: UUID?, promotionalOffer: PromotionalOfferSignature?
    ) async throws(StorekeeperError) -> StorePurchaseOutcome {
        let customer = self.customer
        let result = state.withLock { state -> Result<StorePurchaseOutcome, StorekeeperError> in
            if let outcome = state.nextOutcome {
                state.nextOutcome = nil
                if case .purchased = outcome {} else { return .success(outcome) }
            }
            do {
                try state.model.setAppAccountToken(customer, appAccountToken?.uuidString)
                let before = Set(state.model.transactionOrder)
                guard let product = state.model.app.catalog[productId] else {
                    return .failure(.store("the App Store has no product '\(productId)'"))
                }
                if product.type == .autoRenewable {
                    let offer: PurchaseOffer = promotionalOffer.map { .promotional(id: $0.offerId) } ?? .none
                    state.notifications += try state.model.subscribe(customer, product: productId, offer: offer)
                } else {
                    state.notifications += try state.model.buyOnce(customer, product: productId)
                }
                let signedIds = state.model.transactionOrder.filter { !before.contains($0) }
                guard let id = signedIds.last(where: { state.model.transactions[$0]?.value.productId == productId }),
                    let signed = state.model.transactions[id]
                else { return .failure(.store("the simulator signed no transaction for '\(productId)'")) }
                let transaction = StoreTransaction(
                    id: id, originalId: signed.value.originalTransactionId ?? id, productId: productId, jwsRepresentation: signed.jws,
                    verifiedByStore: true)
                state.handedOver[id] = transaction
                state.unfinished[id] = transaction
                return .success(.purchased(transaction))
            } catch {
                return .failure(.store("\(error)"))
            }
        }
        return try result.get()
    }

    /// Finishes the transaction, and counts it.
    public func finish(_ transaction: StoreTransaction) async {
        state.withLock { state in
            state.finishCounts[transaction.id, default: 0] += 1
            state.unfinished.removeValue(forKey: transaction.id)
        }
    }

    /// Counts a sync; the simulator has nothing to fetch.
    public func sync() async throws(StorekeeperError) {
        state.withLock { $0.syncs += 1 }
    }

    /// The statuses of the customer's subscriptions in the groups of `productIds`, renewal infos signed now.
    public func subscriptionStatuses(productIds: [String]) async -> [StoreSubscriptionStatus] {
        let customer = self.customer
        return state.withLock { state in
            let model = state.model
            let groups = Set(productIds.compactMap { model.app.catalog[$0]?.group })
            guard let statuses = try? model.statuses(ofCustomer: customer) else { return [] }
            return statuses.filter { groups.contains($0.group) }.flatMap(\.items).map { item in
                let transaction = StoreTransaction(
                    id: item.transactionId, originalId: item.originalTransactionId,
                    productId: model.transactions[item.transactionId]?.value.productId ?? "", jwsRepresentation: item.transaction,
                    verifiedByStore: true)
                return StoreSubscriptionStatus(transaction: transaction, renewalInfo: item.renewalInfo)
            }
        }
    }

    /// The simulated app's environment: Sandbox for a TestFlight or App Review build, Production for the App Store's.
    public func environment() async -> CustomerInfo.Environment? {
        CustomerInfo.Environment(rawValue: state.withLock { $0.model.app.environment.rawValue })
    }

    /// The app transaction of this device's app, signed now by the simulator's CA.
    public func appTransaction() async -> String? {
        state.withLock { state in
            let model = state.model
            var payload = AppTransaction()
            payload.receiptType = model.app.environment
            payload.appAppleId = model.app.appAppleId
            payload.bundleId = model.app.bundleId
            payload.applicationVersion = applicationVersion
            payload.originalApplicationVersion = originalApplicationVersion
            payload.originalPurchaseDate = Timestamp(millisecondsSince1970: originalPurchaseDate)
            payload.receiptCreationDate = Timestamp(millisecondsSince1970: model.now)
            payload.signedDate = Timestamp(millisecondsSince1970: model.now)
            payload.appTransactionId = "app-\(customer)"
            payload.originalPlatform = .iOS
            return try? model.ca.sign(payload)
        }
    }
}
