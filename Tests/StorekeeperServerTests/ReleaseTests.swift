import Foundation
import HummingbirdTesting
import Logging
import SQLKit
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Which release answers, and a server that will not run on a database a newer release migrated.
@Suite("Releases: the version, and databases of newer releases")
struct ReleaseTests {
    @Test("the version is CHANGELOG.md's newest release heading")
    func changelog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let heading = try #require(text.split(separator: "\n").first { $0.hasPrefix("## ") })
        #expect(heading.hasPrefix("## \(Release.version) "), "\(heading)")
        let parts = Release.version.split(separator: ".")
        #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil }, "MAJOR.MINOR.PATCH: \(Release.version)")
    }

    @Test("/health and /metrics name the version and the commit")
    func health() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let health = try await client.execute(uri: "/health", method: .get)
            let body = try JSONSerialization.jsonObject(with: Data(buffer: health.body)) as? [String: Any]
            #expect(body?["version"] as? String == Release.version && body?["commit"] as? String == Release.commit)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get, headers: operatorHeaders()).body)
            #expect(
                metrics.contains(#"storekeeper_build_info{version="\#(Release.version)",commit="\#(Release.commit)"} 1"#),
                "\(metrics.prefix(300))")
        }
    }

    static func future(_ version: Int, besidePrevious: Bool) -> Migration {
        Migration(version: version, name: "a change from the future \(version)", besidePrevious: besidePrevious) { db in
            try await db.raw("CREATE TABLE future_\(unsafeRaw: String(version)) (id BIGINT)").run()
        }
    }

    @Test(
        "a database a newer release migrated: refused, naming the migration, unless each unknown migration lets older servers beside it",
        arguments: TestDatabase.available)
    func newer(kind: TestDatabase) async throws {
        let location = try await kind.fresh()
        var settings = CoreSettings()
        settings.database = location
        settings.responseSigning = false
        let logger = Logger(label: "test")

        let database = try await StorageDatabase.open(location)
        do {
            try await Migrator(database: database, migrations: Schema.migrations + [Self.future(900, besidePrevious: true)]).migrate()
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        // Only migrations that allow older servers beside them: this release starts.
        let core = try await StorekeeperCore.open(settings, logger: logger)
        await core.database.close()

        let again = try await StorageDatabase.open(location)
        do {
            try await Migrator(
                database: again,
                migrations: Schema.migrations + [Self.future(900, besidePrevious: true), Self.future(901, besidePrevious: false)]
            ).migrate()
            let newer = try await Migrator(database: again).newer()
            #expect(newer.map(\.version) == [900, 901] && newer.map(\.besidePrevious) == [true, false])
        } catch {
            await again.close()
            throw error
        }
        await again.close()
        await #expect {
            _ = try await StorekeeperCore.open(settings, logger: logger)
        } throws: { error in
            guard let error = error as? StorageError, error.code == .newerSchema else { return false }
            return error.message.contains("migration 901 (a change from the future 901)") && error.message.contains(Release.version)
        }
    }
}
