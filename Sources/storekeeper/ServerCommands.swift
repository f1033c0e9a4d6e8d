import AppStore
import ArgumentParser
import Configuration
import Entitlements
import Foundation
import Hummingbird
import Logging
import NIOCore
import Storage
import StorekeeperCore
import StorekeeperServer

/// The database and logging options every server command shares. Each is read from its argument, then from a
/// `STOREKEEPER_*` environment variable, then from its default (swift-configuration; the defaults live in
/// `CoreSettings` and `ServerSettings`).
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: "postgres://… or a SQLite path (env STOREKEEPER_DATABASE_URL; default ./storekeeper.sqlite).")
    var databaseURL: String?

    @Option(
        name: .customLong("log-level"),
        help: "trace, debug, info, notice, warning, error or critical (env STOREKEEPER_LOG_LEVEL; default info).")
    var logLevel: String?

    /// Arguments first, then the environment.
    func reader(extra: [String: String?] = [:]) -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        var given = extra
        given[CoreSettings.Key.databaseURL] = databaseURL
        given[CoreSettings.Key.logLevel] = logLevel
        for (key, value) in given {
            if let value {
                values[AbsoluteConfigKey(stringLiteral: key)] = ConfigValue(.string(value), isSecret: key == CoreSettings.Key.databaseURL)
            }
        }
        return ConfigReader(providers: [
            InMemoryProvider(name: "arguments", values: values),
            EnvironmentVariablesProvider(secretsSpecifier: .specific(["STOREKEEPER_DATABASE_URL", "STOREKEEPER_SIGNING_KEY"])),
        ])
    }

    func settings(extra: [String: String?] = [:]) throws -> ServerSettings {
        do { return try ServerSettings(reader: reader(extra: extra)) } catch { throw UsageError(message: error.description) }
    }

    static func logger(_ level: Logger.Level) -> Logger {
        var logger = Logger(label: "storekeeper")
        logger.logLevel = level
        return logger
    }
}

extension DatabaseOptions {
    /// Runs `body` on the core opened as these options say and closes it after, whatever happens; the domain's
    /// refusals become usage errors (exit 2).
    func withCore<T>(_ body: (StorekeeperCore) async throws -> T) async throws -> T {
        let core = try await openCore(try settings().core, logger: Self.logger(.warning))
        do {
            let value = try await body(core)
            await core.database.close()
            return value
        } catch let error as CoreError {
            await core.database.close()
            throw UsageError(message: error.description)
        } catch {
            await core.database.close()
            throw error
        }
    }
}

/// A value as indented JSON with sorted keys on stdout, as the commands print their answers.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server (SQLite in ./storekeeper.sqlite unless told otherwise).")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The port (env STOREKEEPER_PORT; default 8080; 0 picks a free one).")
    var port: Int?

    @Option(help: "The address to listen on (env STOREKEEPER_HOST; default 127.0.0.1).")
    var host: String?

    @Flag(help: "Apply pending migrations first (a new SQLite file is migrated anyway).")
    var migrate = false

    @Option(
        name: .customLong("reconcile-interval"),
        help: "Seconds between reconciliation passes; 0 turns it off (env STOREKEEPER_RECONCILE_INTERVAL; default 600).")
    var reconcileInterval: Int?

    @Flag(
        name: .customLong("secure-cookies"),
        help: "Mark the dashboard's session cookie Secure, for a server behind HTTPS (env STOREKEEPER_SECURE_COOKIES).")
    var secureCookies = false

    func run() async throws {
        let settings = try database.settings(extra: [
            ServerSettings.Key.port: port.map(String.init), ServerSettings.Key.host: host,
            ServerSettings.Key.secureCookies: secureCookies ? "true" : nil,
            CoreSettings.Key.reconcileInterval: reconcileInterval.map(String.init),
            CoreSettings.Key.migrate: migrate ? "true" : nil,
        ])
        let logger = DatabaseOptions.logger(settings.core.logLevel)
        let core = try await openCore(settings.core, logger: logger)
        logger.info("storekeeper starting", metadata: ["database": "\(settings.core.database)", "port": "\(settings.port)"])
        let host = settings.host
        let app = buildApplication(core, settings: settings) { port in
            // One line on stdout, for scripts that start the server on port 0.
            FileHandle.standardOutput.write(Data("storekeeper listening on http://\(host):\(port)\n".utf8))
        }
        do {
            try await app.runService()
        } catch {
            // What was opened is closed on every failure (SQLite's connections must not be dropped open), and the
            // reason is said in words: a taken port most of all, where another storekeeper is often the cause.
            await core.database.close()
            if let io = error as? IOError, io.errnoCode == EADDRINUSE {
                throw UsageError(message: "port \(settings.port) is in use (another storekeeper?); choose one with --port")
            }
            if let io = error as? IOError, io.errnoCode == EADDRNOTAVAIL || io.errnoCode == EACCES {
                throw UsageError(message: "cannot listen on \(host):\(settings.port): \(io.description); choose another --host or --port")
            }
            FileHandle.standardError.write(Data("error: the server stopped: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// Opens the core, turning a schema that needs migrating into a usage message (exit 2).
func openCore(_ settings: CoreSettings, logger: Logger) async throws -> StorekeeperCore {
    do {
        return try await StorekeeperCore.open(settings, logger: logger)
    } catch let error as StorageError where [.pendingMigrations, .newerSchema, .invalidConfiguration].contains(error.code) {
        throw UsageError(message: error.message)
    } catch let error as StorageError {
        FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
        throw ExitCode(1)
    }
}

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply the database's pending migrations (--dry-run: list them).",
        discussion: """
            Refuses a database a newer release migrated (unless each of its migrations lets older servers run beside
            it), naming the migration. Whether a server of the previous release may run beside each migration is in
            the CHANGELOG and docs/versioning.md.
            """)

    @OptionGroup var database: DatabaseOptions
    @Flag(
        name: .customLong("dry-run"),
        help: "List the pending migrations, with whether the previous release may run beside each; apply none.")
    var dryRun = false

    func run() async throws {
        let settings = try database.settings().core
        let logger = DatabaseOptions.logger(settings.logLevel)
        let db: StorageDatabase
        do { db = try await StorageDatabase.open(settings.database, logger: logger) } catch let error as StorageError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            throw ExitCode(1)
        }
        let migrator = Migrator(database: db)
        do {
            try await StorekeeperCore.checkNotNewer(migrator, logger: logger)
        } catch let error as StorageError {
            await db.close()
            throw UsageError(message: error.message)
        }
        if dryRun {
            let pending = try await migrator.pending()
            await db.close()
            print(
                pending.isEmpty
                    ? "nothing to migrate"
                    : pending.map {
                        "would apply \($0.version) \($0.name)"
                            + ($0.besidePrevious
                                ? " (the previous release may run beside it)" : " (stop servers of the previous release first)")
                    }.joined(separator: "\n"))
            return
        }
        let applied: [Migration]
        do { applied = try await migrator.migrate() } catch {
            await db.close()
            throw error
        }
        await db.close()
        print(applied.isEmpty ? "nothing to migrate" : applied.map { "applied \($0.version) \($0.name)" }.joined(separator: "\n"))
        if applied.contains(where: { $0.version == 2 }) {
            print("the money ledger is new: run `storekeeper analytics rebuild` to fill it from the stored facts")
        }
    }
}

struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract:
            "One reconciliation pass: Notification History (onlyFailures), subscriptions near expiry or in billing retry, and states changed by time."
    )

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let settings = try database.settings().core
        let core = try await openCore(settings, logger: DatabaseOptions.logger(settings.logLevel))
        let report = await core.reconciler.run()
        await core.database.close()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
        if !report.errors.isEmpty { throw ExitCode(1) }
    }
}

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "Manage apps.", subcommands: [Create.self, List.self, Show.self, Keys.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the apps: id, bundle id, environments and live keys (their prefixes only; --json for everything).")

        @OptionGroup var database: DatabaseOptions
        @Flag(help: "Print JSON (what `apps show` prints, for every app).") var json = false

        func run() async throws {
            let apps = try await database.withCore { try await $0.administration.list() }
            if json { return try printJSON(apps) }
            if apps.isEmpty { print("no apps yet: storekeeper apps create --bundle-id … --environment sandbox") }
            for app in apps {
                let keys = app.keys.filter { $0.revokedAt == nil }.map(\.prefix).joined(separator: " ")
                print([app.appId, app.bundleId, app.environments.joined(separator: ","), keys].joined(separator: "  "))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One app as JSON: bundle id, Apple id, environments, products, and its keys' prefixes and times (never a secret).")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The app's id (app_…).") var appId: String

        func run() async throws {
            try printJSON(try await database.withCore { try await $0.administration.summary(of: appId) })
        }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Manage an app's API keys.", subcommands: [Rotate.self])

        struct Rotate: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Issue a new key and revoke the old ones of its kind at once (for an operator who lost a key: the command line has the database, the API needs the key). Prints the new key once."
            )

            @OptionGroup var database: DatabaseOptions
            @Argument(help: "The app's id (app_…).") var appId: String
            @Option(help: "secret (default) or public.") var kind: String = "secret"

            func run() async throws {
                guard let parsed = APIKeyRecord.Kind(rawValue: kind.lowercased()) else {
                    throw UsageError(message: "--kind is secret or public, not '\(kind)'")
                }
                try printJSON(
                    try await database.withCore { core in
                        try await core.administration.rotateKey(parsed, of: try await core.apps.app(id: appId))
                    })
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an app; prints its appId, publicKey and secretKey as JSON (the keys are shown only once).")

        @OptionGroup var database: DatabaseOptions

        @Option(name: .customLong("bundle-id")) var bundleId: String
        @Option(name: .customLong("environment"), help: "production, sandbox, xcode or localtesting; repeat for several.")
        var environments: [String]
        @Option(name: .customLong("app-apple-id"), help: "Required for production.") var appAppleId: Int64?
        @Option(name: .customLong("trusted-root"), help: "A DER root certificate to trust instead of Apple's; repeatable.")
        var trustedRoots: [String] = []
        @Option(help: "A product catalog (the Entitlements catalog format).") var catalog: String?
        @Option(name: .customLong("transfer-policy"), help: "transfer (default) or keep.") var transferPolicy: String = "transfer"
        @Option(
            help:
                "json (default), or shell: `export STOREKEEPER_APP=… STOREKEEPER_PK=… STOREKEEPER_SK=…` lines, for eval in a shell."
        )
        var format: String = "json"

        func run() async throws {
            let environmentNames = try environments.map { name -> String in
                guard let known = Environment.known(spelled: name) else {
                    throw UsageError(message: "unknown environment '\(name)': production, sandbox, xcode or localtesting")
                }
                return known.rawValue
            }
            let roots = try trustedRoots.map { path -> String in
                guard let data = FileManager.default.contents(atPath: path) else { throw UsageError(message: "cannot read \(path)") }
                return data.base64EncodedString()
            }
            var parsedCatalog = Catalog.empty
            if let catalog {
                guard let data = FileManager.default.contents(atPath: catalog) else { throw UsageError(message: "cannot read \(catalog)") }
                do { parsedCatalog = try CatalogFile.parse(data, path: catalog) } catch { throw UsageError(message: error.message) }
            }
            guard let policy = AppConfiguration.TransferPolicy(rawValue: transferPolicy) else {
                throw UsageError(message: "the transfer policy is transfer or keep")
            }
            let config = AppConfiguration(
                bundleId: bundleId, appAppleId: appAppleId, environments: environmentNames,
                trustedRoots: roots.isEmpty ? nil : roots, catalog: parsedCatalog, transferPolicy: policy)
            guard ["json", "shell"].contains(format) else { throw UsageError(message: "--format is json or shell, not '\(format)'") }
            do {
                let created = try await database.withCore { try await $0.administration.create(config) }
                if format == "shell" {
                    // Ids and keys are letters, digits and _: nothing a shell would expand.
                    print("export STOREKEEPER_APP=\(created.appId) STOREKEEPER_PK=\(created.publicKey) STOREKEEPER_SK=\(created.secretKey)")
                } else {
                    try printJSON(created)
                }
            } catch let error as UsageError where appAppleId == nil && error.message.contains("appAppleId") {
                // The domain names the configuration's field; here it is a flag.
                throw UsageError(message: error.message + " (pass it with --app-apple-id, the app's id in App Store Connect)")
            }
        }
    }
}
