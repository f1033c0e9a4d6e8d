import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Storage

/// The server's settings, resolved from arguments, `STOREKEEPER_*` variables and defaults by the executable.
public struct ServerSettings: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: DatabaseLocation = .defaultSQLite
    /// Apply pending migrations at start. A new SQLite file is always migrated.
    public var migrate: Bool = false
    /// How often reconciliation runs inside the server; nil turns it off.
    public var reconcileInterval: Duration? = .seconds(600)
    public var logLevel: Logger.Level = .info
    /// How long a cached app, key or customer id is trusted before the database is asked again.
    public var cacheTTL: Duration = .seconds(1)

    public init() {}
}

/// Everything the server is made of, apart from HTTP: the database, the apps, the states and the ingestion.
public struct StorekeeperCore: Sendable {
    public let database: StorageDatabase
    public let ingestion: Ingestion
    public let metrics: ServerMetrics
    public let logger: Logger

    /// Opens the database and checks its schema: a fresh SQLite file (or `migrate`) is migrated; otherwise pending
    /// migrations stop the start with `StorageError.pendingMigrations`.
    public static func open(
        _ settings: ServerSettings, clock: @escaping @Sendable () -> Date = { Date() }, logger: Logger,
        httpClient: HTTPClient? = .shared
    ) async throws -> StorekeeperCore {
        var isNewFile = false
        if case .sqlite(let path) = settings.database { isNewFile = !FileManager.default.fileExists(atPath: path) }
        let database = try await StorageDatabase.open(settings.database, logger: logger)
        do {
            let migrator = Migrator(database: database)
            let pending = try await migrator.pending()
            if !pending.isEmpty {
                let fresh = try await migrator.isFresh()
                guard settings.migrate || (isNewFile && fresh) else {
                    throw StorageError(.pendingMigrations,
                        "the database has \(pending.count) pending migration(s) (\(pending.map { "\($0.version) \($0.name)" }.joined(separator: ", "))): run `storekeeper migrate` or start with --migrate")
                }
                for migration in try await migrator.migrate() {
                    logger.info("migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                }
            }
        } catch {
            await database.close()
            throw error
        }
        return make(database: database, settings: settings, clock: clock, logger: logger, httpClient: httpClient)
    }

    /// Builds the core on an open, migrated database.
    public static func make(
        database: StorageDatabase, settings: ServerSettings, clock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger, httpClient: HTTPClient? = .shared
    ) -> StorekeeperCore {
        let metrics = ServerMetrics()
        let registry = AppRegistry(database: database, ttl: settings.cacheTTL, clock: clock)
        let states = CustomerStates(ttl: settings.cacheTTL)
        let apple = httpClient.map { AppleAPIAccess(httpClient: $0, logger: logger, metrics: metrics) }
        let ingestion = Ingestion(database: database, registry: registry, states: states, metrics: metrics, clock: clock,
                                  logger: logger, appleAPI: apple)
        return StorekeeperCore(database: database, ingestion: ingestion, metrics: metrics, logger: logger)
    }

    /// Every route of the API.
    public func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: ErrorAndMetricsMiddleware(metrics: metrics, logger: logger))
        SystemRoutes(ingestion: ingestion, metrics: metrics).register(router)
        AppRoutes(ingestion: ingestion).register(router)
        CustomerRoutes(ingestion: ingestion).register(router)
        return router
    }

    public var reconciler: Reconciler { Reconciler(ingestion: ingestion) }
}

/// Closes the database once everything listed after it has stopped (services stop in reverse order).
struct DatabaseService: Service {
    let database: StorageDatabase

    func run() async throws {
        try? await gracefulShutdown()
        await database.close()
    }
}

/// The application: the HTTP server, reconciliation, and the database's orderly close, in one service group that
/// shuts down gracefully on SIGTERM or SIGINT (stop accepting, finish what is in flight, close the database).
public func buildApplication(
    _ core: StorekeeperCore, settings: ServerSettings, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    var services: [any Service] = [DatabaseService(database: core.database)]
    if let interval = settings.reconcileInterval {
        services.append(ReconcilerService(reconciler: core.reconciler, interval: interval, logger: core.logger))
    }
    return Application(
        router: core.router(),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "storekeeper"),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? settings.port) },
        logger: core.logger)
}
