import Foundation
import SQLKit
import Storage
import Testing

@testable import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The test harness's own cleanup (`TestRun`): what a run that is over left behind goes, what a live run uses stays.
@Suite("Test runs' leftovers")
struct TestRunTests {
    /// A run that holds its lock, as a live test process does; `release()` ends it.
    final class LiveRun {
        let id: String
        private var descriptor: Int32

        init() throws {
            id = TestRun.newId()
            descriptor = try TestRun.claim(id)
        }

        func release() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        deinit { release() }
    }

    static func directory(_ id: String) throws -> URL {
        let url = TestRun.temporary.appendingPathComponent(TestRun.filePrefix + id, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: url.appendingPathComponent("test.sqlite"))
        return url
    }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test("the files of a run that is over go (lock released, or no lock file at all); a live run's and this run's stay")
    func files() throws {
        let own = try TestRun.current()
        let live = try LiveRun()
        let liveDirectory = try Self.directory(live.id)
        let ended = try LiveRun()
        let endedDirectory = try Self.directory(ended.id)
        ended.release()
        let orphan = try Self.directory(TestRun.newId())

        TestRun.sweepFiles(except: own.id)
        #expect(Self.exists(liveDirectory))
        #expect(Self.exists(URL(fileURLWithPath: TestRun.lockPath(live.id))))
        #expect(!Self.exists(endedDirectory))
        #expect(!Self.exists(URL(fileURLWithPath: TestRun.lockPath(ended.id))))
        #expect(!Self.exists(orphan))
        #expect(Self.exists(own.directory))

        live.release()
        TestRun.sweepFiles(except: own.id)
        #expect(!Self.exists(liveDirectory))
        #expect(!Self.exists(URL(fileURLWithPath: TestRun.lockPath(live.id))))
    }

    @Test("on PostgreSQL, the schemas of a run that is over are dropped; a live run's and this run's are kept")
    func schemas() async throws {
        guard let url = TestDatabase.postgresURL else { return }
        let own = try await TestDatabase.postgres.fresh()
        guard case .postgres(_, let ownSchema?) = own else { throw HarnessError("a test schema has a name") }
        let live = try LiveRun()
        let ended = TestRun.newId()  // Never locked: its lock file does not exist.
        let database = try await StorageDatabase.open(.postgres(url: url))
        let liveSchema = TestRun.schemaPrefix + live.id + "_a"
        let endedSchemas = [TestRun.schemaPrefix + ended + "_a", TestRun.schemaPrefix + ended + "_b"]
        for schema in [liveSchema] + endedSchemas {
            try await database.transaction { sql in
                try await sql.raw("CREATE SCHEMA \(ident: schema)").run()
                try await sql.raw("CREATE TABLE \(ident: schema).t (x INTEGER)").run()
            }
        }
        @Sendable func present() async throws -> Set<String> {
            try await database.read { sql in
                try await sql.raw("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tr\\_%'").all()
                    .map { try $0.decode(column: "nspname", as: String.self) }
            }.reduce(into: Set<String>()) { $0.insert($1) }
        }

        try await TestRun.sweepSchemas(url: url)
        var after = try await present()
        #expect(after.contains(liveSchema))
        #expect(after.contains(ownSchema))
        #expect(after.isDisjoint(with: endedSchemas))

        live.release()
        try await TestRun.sweepSchemas(url: url)
        after = try await present()
        #expect(!after.contains(liveSchema))
        #expect(after.contains(ownSchema))
        await database.close()
    }
}
