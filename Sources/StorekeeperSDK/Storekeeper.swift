import AppStoreModels
import Entitlements
import Experiments
import Foundation

/// The SDK: configure it once at launch, and the app knows what its customer owns.
///
/// At start it listens for store transactions first, then posts the unfinished ones, then refreshes the customer info,
/// all off the caller's thread; the cached customer info is available synchronously at once (`cachedCustomerInfo`).
public final class Storekeeper: Sendable {
    /// What the SDK was configured with.
    public let configuration: Configuration
    let api: APIClient
    let store: any StoreClient
    let storage: any KeyValueStorage
    let queue: PurchaseQueue
    let updates = CustomerInfoBroadcaster()
    let deviceEntitlements = DeviceEntitlements()
    let splitTestStorage: any SplitTestStorage
    let splitTestAnalytics: (any SplitTestAnalytics)?

    /// The app user id in use.
    private let identity: Locked<String>
    /// The server's latest answer for the current app user id, with its ETag.
    private let cached: Locked<CachedCustomer?>
    private let catalog: Locked<CachedCatalog?>
    /// `configuration.bundledCatalog`, read once.
    private let bundledCatalog: Catalog?
    private let definitions: Locked<ExperimentDefinitionSet?>
    /// The device's latest own computation (a purchase not posted yet); it stands only while it is newer than the
    /// server's latest answer (a 200 or a 304), and a refusal of a queued purchase drops it.
    let computed = Locked<CustomerInfo?>(nil)
    /// The latest server time known, and when (monotonic) it was learnt.
    private let serverTime: Locked<(requestDate: Int64, receivedAt: Duration)?>
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let launched = Locked<Task<Void, Never>?>(nil)
    /// The environment the store said this copy of the app buys in, once it said; else when it last could not tell
    /// (monotonic), so that a store that cannot tell is not asked before every request.
    private let knownEnvironment = Locked<KnownEnvironment>(KnownEnvironment())

    struct KnownEnvironment {
        var environment: CustomerInfo.Environment?
        var untoldAt: Duration?
    }
    /// How long after the store could not tell the environment the SDK asks it again.
    static let environmentRetry: Duration = .seconds(300)

    struct CachedCustomer: Codable, Sendable {
        var info: CustomerInfo
        var etag: String?
    }

    /// Configures the SDK and starts it in the background; returns at once.
    public init(
        configuration: Configuration, store: any StoreClient, splitTestStorage: (any SplitTestStorage)? = nil,
        splitTestAnalytics: (any SplitTestAnalytics)? = nil
    ) {
        self.configuration = configuration
        let storage = configuration.storage ?? FileStorage.standard()
        self.storage = storage
        self.store = store
        self.api = APIClient(configuration: configuration, transport: configuration.transport ?? URLSessionTransport())
        self.queue = PurchaseQueue(storage: storage)
        self.splitTestStorage = splitTestStorage ?? DefaultSplitTestStorage(storage: storage)
        self.splitTestAnalytics = splitTestAnalytics

        let appUserId = Self.launchIdentity(configuration, storage: Self.identityStorage(configuration, default: storage))
        self.identity = Locked(appUserId)
        let now = configuration.clock.monotonic()
        var cachedCustomer = storage.data(forKey: StorageKeys.customerInfo(appUserId)).flatMap {
            try? APIClient.decoder.decode(CachedCustomer.self, from: $0)
        }
        // A relaunch restarts the monotonic clock: the cached answer's server time counts from now.
        cachedCustomer?.info.receivedAt = now
        cachedCustomer?.info.monotonic = configuration.clock.monotonic
        cachedCustomer?.info.wall = configuration.clock.wall
        self.cached = Locked(cachedCustomer)
        self.serverTime = Locked(cachedCustomer.map { ($0.info.requestMilliseconds, now) })
        self.catalog = Locked(
            storage.data(forKey: StorageKeys.catalog).flatMap { try? APIClient.decoder.decode(CachedCatalog.self, from: $0) })
        do {
            self.bundledCatalog = try configuration.bundledCatalog.map { try APIClient.decoder.decode(Catalog.self, from: $0) }
        } catch {
            configuration.log("the bundled catalog does not read as a Storekeeper catalog, so it is not used: \(error)")
            self.bundledCatalog = nil
        }
        self.definitions = Locked(
            storage.data(forKey: StorageKeys.definitions).flatMap { try? APIClient.decoder.decode(ExperimentDefinitionSet.self, from: $0) })
        if let info = cachedCustomer?.info { updates.publish(info) }
        let task = Task { [self] in await self.launch() }
        launched.withLock { $0 = task }
    }

    deinit {
        for task in tasks.current { task.cancel() }
    }

    /// Stops listening to the store and retrying (the queue stays on disk for the next launch).
    public func shutdown() {
        for task in tasks.withLock({ tasks in
            defer { tasks = [] }
            return tasks
        }) { task.cancel() }
        launched.current?.cancel()
    }

    /// Returns when the start sequence (listener, unfinished transactions, first refresh) has run.
    public func waitUntilStarted() async {
        await launched.current?.value
    }

    private func launch() async {
        let listener = Task { [weak self, store] in
            for await transaction in store.transactionUpdates() {
                guard let self else { return }
                await self.received(transaction)
            }
        }
        tasks.withLock { $0.append(listener) }
        let appUserId = self.appUserId
        for transaction in await store.unfinishedTransactions() {
            do {
                try await queue.add(transaction, appUserId: appUserId, finishes: true)
            } catch {
                log("could not queue transaction \(transaction.id) to post: \(error)")
            }
        }
        await drain()
        _ = try? await fetch()
        await refreshCatalogIfNeeded()
        // Decoded now, the transactions cost the offline computation nothing later, when it is needed.
        _ = deviceEntitlements.payloads(of: await store.currentEntitlements() + queue.pending.map(\.transaction))
    }

    private static func launchIdentity(_ configuration: Configuration, storage: any KeyValueStorage) -> String {
        if let given = configuration.appUserId, !given.isEmpty {
            try? storage.set(Data(given.utf8), forKey: StorageKeys.appUserId)
            return given
        }
        if let stored = storage.data(forKey: StorageKeys.appUserId).flatMap({ String(data: $0, encoding: .utf8) }), !stored.isEmpty {
            return stored
        }
        let anonymous = anonymousPrefix + UUID().uuidString
        try? storage.set(Data(anonymous.utf8), forKey: StorageKeys.appUserId)
        return anonymous
    }

    static let anonymousPrefix = "$device:"

    /// Where the app user id is kept: the configured place, else the Keychain on Apple platforms, else `storage`.
    static func identityStorage(_ configuration: Configuration, default storage: any KeyValueStorage) -> any KeyValueStorage {
        if let configured = configuration.identityStorage { return configured }
        #if canImport(Security)
            return KeychainStorage()
        #else
            return storage
        #endif
    }

    func log(_ message: String) { configuration.log("Storekeeper: " + message) }

    /// Keeps a background task, so that `shutdown()` cancels it; finished ones are dropped as new ones come.
    func trackTask(_ task: Task<Void, Never>) {
        tasks.withLock { tasks in
            tasks.removeAll { $0.isCancelled }
            tasks.append(task)
            if tasks.count > 64 { tasks.removeFirst(tasks.count - 64) }
        }
    }

    // MARK: identity

    /// The app user id in use: the one configured or logged in, or the anonymous `$device:<UUID>`.
    public var appUserId: String { identity.current }

    /// Whether the customer is the device's anonymous one (no `logIn` yet).
    public var isAnonymous: Bool { appUserId.hasPrefix(Self.anonymousPrefix) }

    /// Signs a user in. An anonymous customer's purchases move to the named one (the server merges them).
    @discardableResult
    public func logIn(_ appUserId: String) async throws(StorekeeperError) -> CustomerInfo {
        let previous = self.appUserId
        guard appUserId != previous else { return try await fetch() }
        let info: CustomerInfo
        if previous.hasPrefix(Self.anonymousPrefix), !appUserId.hasPrefix(Self.anonymousPrefix) {
            info = try await api.alias(previous, of: appUserId, environment: await storeEnvironment())
        } else {
            guard case .info(let fetched, _) = try await api.customer(appUserId, etag: nil, environment: await storeEnvironment()) else {
                throw .server(status: 304, code: "not_modified", message: "a request without an ETag was answered 304", permanent: false)
            }
            info = fetched
        }
        switchIdentity(to: appUserId)
        accept(info, etag: nil)
        return info
    }

    /// Signs the user out: a new anonymous customer, who owns nothing until it buys or restores.
    @discardableResult
    public func logOut() async throws(StorekeeperError) -> CustomerInfo {
        switchIdentity(to: Self.anonymousPrefix + UUID().uuidString)
        return try await fetch()
    }

    private func switchIdentity(to appUserId: String) {
        identity.withLock { $0 = appUserId }
        try? Self.identityStorage(configuration, default: storage).set(Data(appUserId.utf8), forKey: StorageKeys.appUserId)
        let stored = storage.data(forKey: StorageKeys.customerInfo(appUserId)).flatMap {
            try? APIClient.decoder.decode(CachedCustomer.self, from: $0)
        }
        cached.withLock { $0 = stored.map { self.restarted($0) } }
    }

    private func restarted(_ customer: CachedCustomer) -> CachedCustomer {
        var customer = customer
        customer.info.receivedAt = configuration.clock.monotonic()
        customer.info.monotonic = configuration.clock.monotonic
        customer.info.wall = configuration.clock.wall
        return customer
    }

    // MARK: customer info

    /// How much to trust the cache.
    public enum CachePolicy: Sendable {
        /// The cached info while it is fresh (5 minutes), else the server's.
        case cachedOrFetched
        /// The server's, now.
        case fetchCurrent
        /// Whatever is cached, without asking the server.
        case cachedOnly
    }

    /// The latest customer info of the current app user, synchronously: the server's last answer (kept across launches),
    /// or the device's own computation when that is newer (a purchase the server has not seen yet). Nil only before
    /// the first answer ever.
    public var cachedCustomerInfo: CustomerInfo? {
        let server = serverInfo
        if let computed = computed.current, computed.appUserId == appUserId, server.map({ computed.receivedAt > $0.receivedAt }) ?? true {
            return computed
        }
        return server
    }

    /// The server's last answer for the current app user.
    var serverInfo: CustomerInfo? {
        let appUserId = self.appUserId
        return cached.withLock { $0?.info.appUserId == appUserId ? $0?.info : nil }
    }

    /// The customer info as it changes: the latest at once, then every change.
    public var customerInfoUpdates: AsyncStream<CustomerInfo> { updates.stream() }

    /// The customer info. When the server cannot be reached (network, 5xx) or answers something this SDK cannot read
    /// (a newer server's value, a captive portal's page), the answer is the cached one or, without one, the device's
    /// own computation from the transactions it holds (`source: .device`). `.fetchCurrent` throws instead.
    public func customerInfo(policy: CachePolicy = .cachedOrFetched) async throws(StorekeeperError) -> CustomerInfo {
        let appUserId = self.appUserId
        let pending = await queue.hasPending(for: appUserId)
        switch policy {
        case .cachedOnly:
            if !pending, let info = serverInfo { return info }
            if let info = await deviceInfo() { return info }
            throw .unavailable("no customer info is cached yet")
        case .cachedOrFetched:
            if !pending, let info = serverInfo, configuration.clock.monotonic() - info.receivedAt < configuration.staleAfter {
                return info
            }
            do {
                return try await fetch()
            } catch  where error.isRetryable || error.isUnreadableAnswer {
                // A purchase the server has not seen yet is not in the cached answer: the device's own count wins.
                if !pending, let info = serverInfo { return info }
                if let info = await deviceInfo() { return info }
                throw error
            }
        case .fetchCurrent:
            return try await fetch()
        }
    }

    /// Asks the server (after posting what is queued), caches and publishes the answer.
    @discardableResult
    private func fetch() async throws(StorekeeperError) -> CustomerInfo {
        await drain()
        let appUserId = self.appUserId
        let etag = cached.withLock { $0?.info.appUserId == appUserId ? $0?.etag : nil }
        switch try await api.customer(appUserId, etag: etag, environment: await storeEnvironment()) {
        case .info(let info, let etag):
            accept(info, etag: etag)
            return serverInfo ?? info
        case .notModified(let verification):
            guard var customer = cached.current, customer.info.appUserId == appUserId else {
                throw .server(status: 304, code: "not_modified", message: "304 for an answer that is not cached", permanent: false)
            }
            // Nothing changed since the cached answer; its server time moves on by the monotonic clock. A 304 signed for
            // this request vouches again for the answer its ETag names (verified when it came); one that failed does not.
            customer.info.requestMilliseconds = customer.info.nowMilliseconds
            customer.info.receivedAt = configuration.clock.monotonic()
            switch verification {
            case .failed, .notRequested: customer.info.verification = verification
            case .verified, .verifiedOnDevice: break  // the cached answer keeps the verification it came with
            }
            cached.withLock { $0 = customer }
            noteServerTime(customer.info.requestMilliseconds)
            return customer.info
        }
    }

    /// Takes a server answer for the current app user: cached in memory and on disk, published.
    func accept(_ answer: CustomerInfo, etag: String?) {
        var info = answer
        info.receivedAt = configuration.clock.monotonic()
        info.monotonic = configuration.clock.monotonic
        info.wall = configuration.clock.wall
        noteServerTime(info.requestMilliseconds)
        guard info.appUserId == appUserId else { return }
        let customer = CachedCustomer(info: info, etag: etag)
        cached.withLock { $0 = customer }
        do {
            try storage.set(try APIClient.encoder.encode(customer), forKey: StorageKeys.customerInfo(info.appUserId))
        } catch {
            log("could not keep the customer info for the next launch: \(error)")
        }
        updates.publish(info)
    }

    private func noteServerTime(_ requestDate: Int64) {
        let now = configuration.clock.monotonic()
        serverTime.withLock { $0 = (requestDate, now) }
    }

    /// The server's time now as far as the SDK knows it, and at least the latest signed date it holds; the device
    /// clock only when nothing else tells the time.
    func trustedNow(signedAtLeast signed: Int64? = nil) -> Int64 {
        let server = serverTime.current.map { $0.requestDate + max(0, (configuration.clock.monotonic() - $0.receivedAt).milliseconds) }
        if let best = [server, signed].compactMap({ $0 }).max() { return best }
        return Int64((configuration.clock.wall().timeIntervalSince1970 * 1000).rounded())
    }

    /// The customer's state from the transactions on the device (queued and current), or nil without a catalog.
    func deviceInfo() async -> CustomerInfo? {
        guard let catalog = catalog.current?.catalog ?? bundledCatalog else { return nil }
        let appUserId = self.appUserId
        var transactions: [String: StoreTransaction] = [:]
        for item in await queue.pending where item.appUserId == appUserId { transactions[item.transaction.id] = item.transaction }
        // What the store says this device's Apple ID has now, with what is still on its way to the server.
        for transaction in await store.currentEntitlements() where transactions[transaction.id] == nil {
            transactions[transaction.id] = transaction
        }
        // The subscriptions' statuses: a renewal info says whether a lapsed subscription is in its grace period (still
        // entitled) and whether it renews; the latest transaction of one in billing retry is no current entitlement.
        let subscriptionProducts = catalog.products.filter { $0.type == .autoRenewable }.map(\.id)
        let statuses = subscriptionProducts.isEmpty ? [] : await store.subscriptionStatuses(productIds: subscriptionProducts)
        for status in statuses where transactions[status.transaction.id] == nil { transactions[status.transaction.id] = status.transaction }
        let renewals = statuses.compactMap { OfflineEntitlements.payload(of: $0.renewalInfo, as: JWSRenewalInfoDecodedPayload.self) }
        let payloads = deviceEntitlements.payloads(of: Array(transactions.values))
        let now = trustedNow(signedAtLeast: OfflineEntitlements.latestSignedDate(payloads, renewals))
        let known = serverInfo
        // What the device computes is its own store's purchases: the environment it runs in.
        let current = await storeEnvironment()
        let environment =
            current ?? known?.environment ?? payloads.first?.environment.flatMap { CustomerInfo.Environment(rawValue: $0.rawValue) }
        var info = CustomerInfo(
            appUserId: appUserId, appId: known?.appId, appAccountToken: known?.appAccountToken,
            environment: environment ?? .production, requestMilliseconds: now, source: .device,
            state: OfflineEntitlements.state(of: payloads, renewals: renewals, catalog: catalog, now: now))
        info.currentEnvironment = current
        // The engine's answer from what StoreKit signed: verified on the device when StoreKit checked every transaction,
        // failed when it found one that does not verify, not known otherwise (or with verification off).
        let checks = transactions.values.map(\.verifiedByStore)
        if configuration.verification == .disabled || checks.contains(nil) {
            info.verification = .notRequested
        } else {
            info.verification = checks.contains(false) ? .failed : .verifiedOnDevice
        }
        info.receivedAt = configuration.clock.monotonic()
        info.monotonic = configuration.clock.monotonic
        info.wall = configuration.clock.wall
        computed.withLock { $0 = info }
        updates.publish(info)
        return info
    }

    /// The App Store environment this copy of the app buys in, as the store tells it (StoreKit's app transaction: a
    /// TestFlight or App Review build buys in the Sandbox, an App Store download in Production); nil while it cannot
    /// tell. The SDK sends it with its reads, purchases, placements and exposures, so the server answers for every
    /// environment the app accepts and marks this one (`CustomerInfo.activeInCurrentEnvironment`), and a sandbox
    /// tester's exposure never counts in a Production split test.
    public func storeEnvironment() async -> CustomerInfo.Environment? {
        let known = knownEnvironment.current
        if let environment = known.environment { return environment }
        let now = configuration.clock.monotonic()
        if let untold = known.untoldAt, now - untold < Self.environmentRetry { return nil }
        let told = await store.environment()
        knownEnvironment.withLock {
            $0.environment = told
            $0.untoldAt = told == nil ? now : nil
        }
        return told
    }

    /// The app's own purchase or download as the App Store signed it (`AppTransaction.shared`, verified by StoreKit
    /// on the device): `originalApplicationVersion` and `originalPurchaseDate` tell an app that moved from a paid
    /// download to subscriptions who bought it before; `receiptType` is the environment. Nil when the store has none.
    public func appTransaction() async -> AppTransaction? {
        guard let jws = await store.appTransaction() else { return nil }
        return OfflineEntitlements.payload(of: jws, as: AppTransaction.self)
    }

    // MARK: catalog and experiment definitions

    var definitionsValue: ExperimentDefinitionSet? { definitions.current }

    /// The experiment definitions from the server (kept for when it cannot be reached), or the cached ones.
    func refreshDefinitions() async -> ExperimentDefinitionSet? {
        var appId = cachedCustomerInfo?.appId
        if appId == nil { appId = try? await customerInfo().appId }
        guard let appId else { return nil }
        do {
            let fetched = try await api.definitions(app: appId)
            definitions.withLock { $0 = fetched }
            try storage.set(try APIClient.encoder.encode(fetched), forKey: StorageKeys.definitions)
            return fetched
        } catch {
            log("could not fetch the experiment definitions: \(error)")
            return nil
        }
    }

    private func refreshCatalogIfNeeded() async {
        guard let appId = cachedCustomerInfo?.appId else { return }
        if let current = catalog.current, trustedNow() - current.fetchedAt < CachedCatalog.lifetime { return }
        do {
            let fetched = CachedCatalog(catalog: try await api.catalog(app: appId), fetchedAt: trustedNow())
            catalog.withLock { $0 = fetched }
            try storage.set(try APIClient.encoder.encode(fetched), forKey: StorageKeys.catalog)
        } catch {
            log("could not refresh the catalog: \(error)")
        }
    }
}
