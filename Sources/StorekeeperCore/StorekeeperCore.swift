import AsyncHTTPClient
import Crypto
import Foundation
import Integrations
import Logging
import ServiceLifecycle
import Storage

/// Everything Storekeeper does apart from HTTP: the database, the apps, and one service per use case.
public struct StorekeeperCore: Sendable {
    public let database: StorageDatabase
    /// The apps and their keys (cached): authentication and the webhook's app.
    public let apps: AppRegistry
    public let notifications: NotificationIngestion
    public let purchases: PurchaseLinking
    public let customers: CustomerReads
    /// The appAccountToken of every app user id (StoreKit's purchase option), registered as it is answered.
    public let accountTokens: AccountTokens
    public let promotionalOffers: PromotionalOffers
    public let administration: AppAdministration
    public let reconciler: Reconciler
    /// Imports of existing customers from Apple.
    public let imports: CustomerImports
    /// The export views written as files.
    public var export: DataExport { DataExport(database: database) }
    /// Runs the imports started over HTTP (one of `services`).
    public let importWorker: ImportWorker
    /// The exchange-rate feed (`ratesURL`); nil when it is off or there is no HTTP client.
    public let ratesFeed: RatesFeed?
    public let analytics: AppAnalytics
    public let dashboardAccounts: DashboardAccounts
    public let inspection: CustomerInspection
    /// The app's event destinations and their deliveries.
    public let integrations: IntegrationAdministration
    /// Paywalls, placements and experiments (secret key).
    public let experiments: ExperimentAdministration
    /// The placement answers and exposures the app asks for (public key).
    public let placements: PlacementServing
    public let experimentResults: ExperimentResultsReader
    /// Sends the outbox (one of `services`).
    let deliveryWorker: DeliveryWorker
    /// Watches a SQLite database for other processes' writes, so cached customers outlive the TTL (one of `services`).
    let otherProcessWrites: OtherProcessWrites
    /// Apple's refund requests, the policy's answers and what apps report for them.
    public let refundRequests: RefundRequests
    public let refundAnswers: RefundAnswerWorker
    public let retention: RetentionMessaging
    public let metrics: ServerMetrics
    public let settings: CoreSettings
    /// Signs the customer API's answers; nil when `responseSigning` is off.
    public let responseSigner: ResponseSigner?
    public let logger: Logger
    /// The server's clock (tests set it).
    public let clock: @Sendable () -> Date

    /// A feed of the exchange rates at `url` on this core's database (the configured one is `ratesFeed`).
    public func ratesFeed(url: String) -> RatesFeed {
        RatesFeed(
            database: database, url: url, httpClient: AppleAPIAccess.noRedirects,
            addresses: AddressPolicy(allowPrivate: settings.allowPrivateWebhooks), metrics: metrics, logger: logger, clock: clock)
    }

    /// Server time, ms since 1970.
    public var now: Int64 { clock().millisecondsSince1970 }

    /// Opens the database and checks its schema: a fresh SQLite file (or `migrate`) is migrated; otherwise pending
    /// migrations stop the start with `StorageError.pendingMigrations`, and migrations of a newer release that older
    /// servers may not run beside with `StorageError.newerSchema`.
    public static func open(
        _ settings: CoreSettings, clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger,
        httpClient: HTTPClient? = .shared
    ) async throws -> StorekeeperCore {
        var isNewFile = false
        if case .sqlite(let path) = settings.database { isNewFile = !FileManager.default.fileExists(atPath: path) }
        let database = try await StorageDatabase.open(settings.database, logger: logger)
        do {
            let migrator = Migrator(database: database)
            try await Self.checkNotNewer(migrator, logger: logger)
            let pending = try await migrator.pending()
            if !pending.isEmpty {
                let fresh = try await migrator.isFresh()
                guard settings.migrate || (isNewFile && fresh) else {
                    let names = pending.map { "\($0.version) \($0.name)" }.joined(separator: ", ")
                    throw StorageError(
                        .pendingMigrations,
                        "the database has \(pending.count) pending migration(s) (\(names)): run `storekeeper migrate` or start with --migrate"
                    )
                }
                for migration in try await migrator.migrate() {
                    logger.info("migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                }
            }
        } catch {
            await database.close()
            throw error
        }
        let root: Curve25519.Signing.PrivateKey?
        do {
            root = settings.responseSigning ? try SigningRootKey.load(settings) : nil
        } catch {
            await database.close()
            throw error
        }
        return StorekeeperCore(
            database: database, settings: settings, clock: clock, logger: logger, httpClient: httpClient, signingRoot: root)
    }

    /// Refuses a database a newer release migrated, unless every migration this build does not know lets older servers
    /// run beside it (then only a warning: a rolling upgrade).
    public static func checkNotNewer(_ migrator: Migrator, logger: Logger) async throws {
        let newer = try await migrator.newer()
        guard let newest = newer.last else { return }
        let known = migrator.migrations.last.map { "\($0.version) (\($0.name))" } ?? "none"
        if let blocking = newer.first(where: { $0.besidePrevious != true }) {
            throw StorageError(
                .newerSchema,
                "the database was migrated by a newer release: migration \(blocking.version) (\(blocking.name)) is unknown to "
                    + "this one (\(Release.version), whose newest migration is \(known)) and older servers may not run beside it. "
                    + "Run the release that migrated it, or a newer one (`storekeeper --version` names this one); to go back, restore "
                    + "the backup taken before the upgrade (docs/versioning.md)")
        }
        logger.warning(
            "the database has migrations of a newer release, each of which lets this one run beside it",
            metadata: ["newest": "\(newest.version) \(newest.name)", "thisRelease": "\(Release.version)"])
    }

    /// The core on an open, migrated database. `signingRoot` signs the customer API's answers; nil makes a key for
    /// this process alone (tests), unless `responseSigning` is off.
    public init(
        database: StorageDatabase, settings: CoreSettings, clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger,
        httpClient: HTTPClient? = .shared, signingRoot: Curve25519.Signing.PrivateKey? = nil
    ) {
        let metrics = ServerMetrics()
        let apps = AppRegistry(database: database, ttl: settings.cacheTTL, clock: clock)
        let cache = CustomerStateCache(ttl: settings.cacheTTL)
        let signal = OutboxSignal()
        let activity = IngestActivity()
        let recomputer = StateRecomputer(database: database, cache: cache, outbox: signal)
        let addresses = AddressPolicy(allowPrivate: settings.allowPrivateWebhooks)
        let appleURLs = AppleURLPolicy(allowCustom: settings.allowCustomAppleURLs, addresses: addresses)
        // Without an HTTP client (tests that must not call out), nothing is asked of Apple; with one, Apple is called
        // through a client that follows no redirect.
        let apple = httpClient.map { _ in AppleAPIAccess(urls: appleURLs, logger: logger, metrics: metrics) }
        let sightings = PendingSightings()
        let notifications = NotificationIngestion(
            database: database, recomputer: recomputer, activity: activity, metrics: metrics, clock: clock, logger: logger,
            sightings: sightings)
        self.database = database
        self.apps = apps
        self.notifications = notifications
        self.purchases = PurchaseLinking(
            database: database, recomputer: recomputer, cache: cache, activity: activity, metrics: metrics, clock: clock, appleAPI: apple)
        let customers = CustomerReads(database: database, cache: cache, recomputer: recomputer, clock: clock)
        self.customers = customers
        let newIds = ClientRateLimiter(perMinute: settings.newIdsPerMinute)
        self.accountTokens = AccountTokens(
            database: database, newIds: newIds, pending: sightings, unclaimedRetention: settings.unclaimedIdsRetention, clock: clock)
        self.promotionalOffers = PromotionalOffers(customers: customers, tokens: accountTokens, clock: clock)
        let administration = AppAdministration(database: database, registry: apps, cache: cache, appleURLs: appleURLs, clock: clock)
        self.administration = administration
        self.refundRequests = RefundRequests(database: database, administration: administration, clock: clock)
        self.refundAnswers = RefundAnswerWorker(
            database: database, registry: apps, appleAPI: apple, metrics: metrics, logger: logger, clock: clock)
        self.reconciler = Reconciler(
            database: database, registry: apps, ingestion: notifications, recomputer: recomputer, appleAPI: apple, metrics: metrics,
            clock: clock)
        self.imports = CustomerImports(
            database: database, registry: apps, recomputer: recomputer, cache: cache, appleAPI: apple, logger: logger, clock: clock)
        self.importWorker = ImportWorker(imports: imports, database: database, logger: logger)
        if let url = settings.ratesURL, httpClient != nil {
            self.ratesFeed = RatesFeed(
                database: database, url: url, httpClient: AppleAPIAccess.noRedirects, addresses: addresses, metrics: metrics,
                logger: logger,
                clock: clock)
        } else {
            self.ratesFeed = nil
        }
        self.analytics = AppAnalytics(database: database, recomputer: recomputer, clock: clock)
        self.dashboardAccounts = DashboardAccounts(
            database: database, hashing: PasswordHashing(queue: settings.signInQueue),
            throttle: SignInThrottle(policy: .init(perMinute: settings.signInPerMinute)), clock: clock)
        self.inspection = CustomerInspection(database: database, reads: customers)
        let sender = DeliverySender(
            transport: DeliveryTransport(
                client: DeliveryTransport.sharedClient, policy: AddressPolicy(allowPrivate: settings.allowPrivateWebhooks)))
        self.integrations = IntegrationAdministration(database: database, registry: apps, sender: sender, signal: signal, clock: clock)
        self.deliveryWorker = DeliveryWorker(
            database: database, registry: apps, sender: sender, signal: signal, activity: activity, metrics: metrics, logger: logger,
            clock: clock, lease: settings.deliveryLease, yield: settings.deliveryYield)
        self.otherProcessWrites = cache.otherProcesses
        let catalogs = ServingCatalogCache(database: database, customers: cache)
        self.experiments = ExperimentAdministration(database: database, catalogs: catalogs, clock: clock)
        self.placements = PlacementServing(database: database, catalogs: catalogs, customers: customers, newIds: newIds, clock: clock)
        self.experimentResults = ExperimentResultsReader(database: database, clock: clock)
        self.retention = RetentionMessaging(
            database: database, customers: customers, catalogs: catalogs, administration: administration, appleAPI: apple, clock: clock)
        self.metrics = metrics
        self.settings = settings
        self.responseSigner =
            settings.responseSigning
            ? ResponseSigner(root: signingRoot ?? Curve25519.Signing.PrivateKey(), rotation: settings.signingRotation) : nil
        self.logger = logger
        self.clock = clock
    }

    /// The services that run beside the HTTP server, in start order: the database's orderly close (it stops last),
    /// SQLite's checkpoints and watch for other processes' writes, the hourly summary's folding, the delivery worker, the imports, the exchange rates (fallback and feed), the
    /// refund answers' worker, then
    /// reconciliation when it is on.
    public var services: [any Service] {
        // The first sightings' batches stop (with a last one) before the database closes.
        var services: [any Service] = [DatabaseService(database: database), AccountTokenService(tokens: accountTokens, logger: logger)]
        if database.kind == .sqlite {
            services.append(CheckpointService(database: database, logger: logger))
            services.append(OtherProcessWatchService(watch: otherProcessWrites, database: database, logger: logger))
        }
        services += [
            LedgerSummaryFolder(database: database, logger: logger), deliveryWorker, importWorker,
            RatesFeedService(database: database, feed: ratesFeed, logger: logger),
        ]
        if let interval = settings.refundAnswerInterval {
            var worker = refundAnswers
            worker.interval = interval
            services.append(worker)
        }
        if let interval = settings.reconcileInterval {
            services.append(ReconcilerService(reconciler: reconciler, interval: interval, logger: logger))
        }
        return services
    }
}

/// Closes the database once everything listed after it has stopped (services stop in reverse order).
struct DatabaseService: Service {
    let database: StorageDatabase

    func run() async throws {
        try? await gracefulShutdown()
        if Task.isCancelled {
            // Cancelled, not shut down (the group ends on a failure, such as a port in use): the other services end at
            // the same moment, and a query one of them had begun on a SQLite reader would run on a closed connection
            // (seen once in CI: a crash in sqlite3Init). Their queries take milliseconds: they are given half a second,
            // on a wait the cancellation does not cut short.
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(500)) { continuation.resume() }
            }
        }
        await database.close()
    }
}
