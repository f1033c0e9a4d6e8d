import Foundation
import SQLKit
import Storage
import TestSupport
import Testing

/// Migration 24: import jobs of the release before, which kept their customers and dropped lines as JSON on the job's
/// row, are moved into `import_customers` and `import_dropped`, and read as jobs of this release.
@Suite("Import jobs of the release before, migrated")
struct LegacyImportJobsTests {
    @Test("a job stored by the release before keeps its customers, their order, lines and dropped lines", arguments: TestDatabase.available)
    func moved(kind: TestDatabase) async throws {
        let database = try await StorageDatabase.open(try await kind.fresh())
        do {
            try await Migrator(database: database, migrations: Schema.migrations.filter { $0.version < 24 }).migrate()
            let customers = """
                [{"appUserId":"ann","aliases":["old \\"ann\\""],"transactionIds":["1000","1001"],"environment":"Sandbox","line":2},
                 {"aliases":[],"transactionIds":["3000"],"appAccountToken":"5c0a7e2f-0000-4000-8000-00000000abcd","line":4}]
                """
            let dropped = #"[{"line":3,"reason":"no transaction id"}]"#
            try await database.writing { session in
                try await session.sql.raw(
                    """
                    INSERT INTO import_jobs (id, app_id, format, source, customers, total, dropped, emit_events, status, detail,
                        created_at, updated_at)
                    VALUES ('imp_old', 'app_1', 'plain', 'ids.csv', \(bind: customers), 2, \(bind: dropped), 0, 'running', NULL, 1, 2)
                    """
                ).run()
            }
            try await Migrator(database: database).migrate()
            let (job, pending, lines) = try await database.reading { session in
                (
                    try await session.importJob(id: "imp_old"),
                    try await session.pendingImportCustomers(job: "imp_old", after: -1, limit: 10),
                    try await session.importDropped(job: "imp_old")
                )
            }
            #expect(job?.total == 2 && job?.droppedLines == 1 && job?.status == "running" && job?.uploadId == nil)
            #expect(pending.map(\.item) == [0, 1] && pending.map(\.line) == [2, 4])
            #expect(
                pending[0].appUserId == "ann" && pending[0].aliases == ["old \"ann\""] && pending[0].transactionIds == ["1000", "1001"])
            #expect(pending[0].key == "name:ann" && pending[0].environment == "Sandbox")
            #expect(pending[1].appUserId == nil && pending[1].key == "transaction:3000")
            #expect(pending[1].appAccountToken == "5c0a7e2f-0000-4000-8000-00000000abcd")
            #expect(lines == [ImportDroppedRecord(line: 3, reason: "no transaction id")])
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}
