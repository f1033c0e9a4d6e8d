import AppStoreSimulator
import CompressNIO
import Foundation
import NIOCore
import SQLKit
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Data out: the export views, `storekeeper export`'s files, and PostgreSQL's read-only role.
@Suite("Data out: the export views, their files, and a read-only role")
struct ExportTests {
    @Test("the views' columns are the documented schema, version 1")
    func columns() {
        let names = Dictionary(uniqueKeysWithValues: ExportViews.views.map { ($0.name, $0.columns.map(\.name)) })
        #expect(ExportViews.schemaVersion == 1)
        #expect(
            names["export_customers"] == [
                "customer_id", "app_id", "app_user_id", "anonymous", "created_at", "environment", "state", "computed_at",
            ])
        #expect(
            names["export_transactions"] == [
                "app_id", "transaction_id", "version", "original_transaction_id", "customer_id", "environment", "product_id",
                "purchase_date", "expires_date", "revocation_date", "price", "currency", "source", "signed_date", "received_at",
            ])
        #expect(names["export_ledger"]?.count == 22 && names["export_ledger"]?.last == "rate_day")
        #expect(
            names["export_events"] == [
                "app_id", "seq", "event_id", "customer_id", "original_transaction_id", "environment", "type", "effective_at",
                "recorded_at", "retracted_at", "payload",
            ])
    }

    static func gunzip(_ url: URL) throws -> String {
        var buffer = ByteBuffer(data: try Data(contentsOf: url))
        var text = ""
        // A file of several gzip members, one per page.
        while buffer.readableBytes > 0 {
            let decompressor = try ZlibDecompressor(algorithm: .gzip)
            var output = ByteBufferAllocator().buffer(capacity: 1 << 24)
            let before = buffer.readableBytes
            try decompressor.inflate(from: &buffer, to: &output)
            #expect(buffer.readableBytes < before)
            text += String(buffer: output)
        }
        return text
    }

    @Test(
        "an export writes every view as gzip CSV and JSON lines: each row once, across pages, within its range",
        arguments: TestDatabase.available)
    func files(database: TestDatabase) async throws {
        let population = Population(customers: 40, days: 120, seed: 4).scenario(catalog: EndToEndTests.catalog)
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h, seed: 4)
            for step in population.steps { try await rig.player.play(step, lenient: true) }
            try await rig.player.advance(to: at(120))
            let counts = try await h.core.database.reading { session in
                var counts: [String: Int] = [:]
                for view in ExportViews.views {
                    counts[view.name] = try await session.sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: view.name)").first()?
                        .decode(column: "n", as: Int.self)
                }
                return counts
            }
            #expect((counts["export_events"] ?? 0) > 100 && (counts["export_ledger"] ?? 0) > 40, "\(counts)")
            let directory = try TestRun.scratch("export")
            let csv = try await h.core.export.write(to: directory, format: .csv, range: ExportRange(), now: at(120))
            for file in csv.files {
                #expect(file.rows == counts[file.view], "\(file)")
                let lines = try Self.gunzip(directory.appendingPathComponent(file.name)).split(
                    separator: "\n", omittingEmptySubsequences: false)
                let view = try #require(ExportViews.views.first { $0.name == file.view })
                #expect(lines.first.map(String.init) == view.columns.map(\.name).joined(separator: ","))
                #expect(lines.filter { !$0.isEmpty }.count >= file.rows + 1)
            }
            let manifest = try JSONDecoder().decode(
                DataExport.Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("manifest.json")))
            #expect(manifest == csv && manifest.schemaVersion == 1)

            // JSON lines, in pages smaller than the table: every event once.
            let jsonDirectory = try TestRun.scratch("export-jsonl")
            let jsonl = try await h.core.export.write(
                to: jsonDirectory, format: .jsonl, range: ExportRange(appId: h.app.appId), now: at(120))
            let events = try Self.gunzip(jsonDirectory.appendingPathComponent("events.jsonl.gz")).split(separator: "\n")
            let seqs = try events.map { line -> Int64 in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(object["app_id"] as? String == h.app.appId && object["payload"] is String)
                return try #require((object["seq"] as? NSNumber)?.int64Value)
            }
            #expect(seqs.count == counts["export_events"] && Set(seqs).count == seqs.count && seqs == seqs.sorted())
            #expect(jsonl.files.first { $0.view == "export_events" }?.rows == seqs.count)

            // A range keeps each view's rows of those days only; another app's id keeps none.
            let month = ExportRange(appId: h.app.appId, from: at(30), until: at(60))
            let partial = try await h.core.export.write(to: try TestRun.scratch("export-month"), format: .csv, range: month, now: at(120))
            let ledgerRows = partial.files.first { $0.view == "export_ledger" }?.rows ?? 0
            #expect(ledgerRows > 0 && ledgerRows < (counts["export_ledger"] ?? 0))
            let none = try await h.core.export.write(
                to: try TestRun.scratch("export-none"), format: .csv, range: ExportRange(appId: "app_nobody"), now: at(120))
            #expect(none.files.allSatisfy { $0.rows == 0 })
        }
    }

    @Test("PostgreSQL: storekeeper sql-role create makes a role that reads the export views and nothing else")
    func analystRole() async throws {
        guard let url = TestDatabase.postgresURL else { return }
        let h = try await Harness.make(.postgres)
        let name = "analyst_" + APIKeys.randomToken(bytes: 6).lowercased()
        let password = APIKeys.randomToken(bytes: 18)
        let schema = try await h.test { _ in
            let schema = try await h.core.database.reading { session in
                try await session.sql.raw("SELECT current_schema() AS s").first()?.decode(column: "s", as: String.self) ?? ""
            }
            try await h.core.database.writing { try await $0.createAnalystRole(name: name, password: password) }
            await #expect(throws: StorageError.self) {
                try await h.core.database.writing { try await $0.createAnalystRole(name: "Robert'); DROP TABLE x; --", password: "p") }
            }
            return schema
        }
        guard var components = URLComponents(string: url) else { throw HarnessError("the test URL does not parse") }
        components.user = name
        components.password = password
        let analyst = try await StorageDatabase.open(.postgres(url: components.string ?? url, schema: schema))
        let rows = try await analyst.reading { session in
            try await session.sql.raw("SELECT COUNT(*) AS n FROM export_ledger").first()?.decode(column: "n", as: Int.self)
        }
        #expect(rows == 0)
        await #expect(throws: (any Error).self) {
            _ = try await analyst.reading { try await $0.sql.raw("SELECT COUNT(*) AS n FROM transactions").all() }
        }
        await #expect(throws: (any Error).self) {
            _ = try await analyst.writing { try await $0.sql.raw("DELETE FROM export_events").run() }
        }
        await analyst.close()
        let admin = try await StorageDatabase.open(.postgres(url: url))
        try await admin.transaction { db in
            try await db.raw("DROP OWNED BY \(unsafeRaw: name)").run()
            try await db.raw("DROP ROLE \(unsafeRaw: name)").run()
        }
        await admin.close()
    }

    @Test("SQLite has no roles: a named refusal")
    func noRolesOnSQLite() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { _ in
            await #expect {
                try await h.core.database.writing { try await $0.createAnalystRole(name: "analyst", password: "secret") }
            } throws: { ($0 as? StorageError)?.message.contains("PostgreSQL's") == true }
        }
    }
}
