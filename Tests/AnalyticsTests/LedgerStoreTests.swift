import Foundation
import SQLKit
import Storage
import TestSupport
import Testing

@testable import Analytics

/// How the ledger's rows travel to the database and back: PostgreSQL's upsert takes them as one JSON array
/// (`LedgerUpsert`), SQLite's as bound values.
@Suite("Analytics: the ledger's writes")
struct LedgerStoreTests {
    /// A row whose texts need escaping in JSON and whose optional columns are set, and one whose are not.
    static func unusual() -> [LedgerEntry] {
        var full = LedgerFormulaTests.period(
            "t\"1\\", chain: "o\n1", customer: "c\u{1}", start: 1_767_225_600_000, end: 1_769_904_000_000, currency: "EUR",
            product: "pro \u{1F680} \"plus\"", storefront: "FRA")
        (full.refundedAt, full.refundAmount, full.taxPerMille, full.willRenew, full.graceUntil) = (
            1_767_312_000_000, 4995, 200, false, 1_770_000_000_000
        )
        (full.acquisition, full.nextStart, full.nextMonthlyPrice, full.nextRefunded) = (.resubscription, 1_769_904_000_000, 0, true)
        (full.familyShared, full.commissionPerMille) = (true, 150)
        var bare = LedgerFormulaTests.period("t2", customer: "c\u{1}", kind: .trial, start: 1_767_225_600_000, end: nil)
        (bare.currency, bare.storefront, bare.renewalNumber) = (nil, nil, nil)
        return [full, bare]
    }

    @Test("the JSON form escapes quotes, backslashes and control characters, and leaves NULL columns out")
    func json() throws {
        let rows = Self.unusual()
        let json = LedgerUpsert.json(rows)
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(decoded.count == 2)
        #expect(decoded[0]["transaction_id"] as? String == "t\"1\\")
        #expect(decoded[0]["original_transaction_id"] as? String == "o\n1")
        #expect(decoded[0]["customer_id"] as? String == "c\u{1}")
        #expect(decoded[0]["product_id"] as? String == "pro \u{1F680} \"plus\"")
        #expect(decoded[0]["refund_amount"] as? Int == 4995 && decoded[0]["next_refunded"] as? Int == 1)
        #expect(decoded[0]["purchase_day"] as? Int == 20454)
        #expect(decoded[1]["currency"] == nil && decoded[1]["renewal_number"] == nil && decoded[1]["end_at"] == nil)
        #expect(Set(decoded[0].keys) == Set(LedgerColumns.written))
    }

    @Test("rows with unusual texts and every column set or unset read back as written", arguments: TestDatabase.available)
    func roundTrip(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            let rows = Self.unusual()
            try await LedgerFormulaTests.store(rows, in: database)
            let stored = try await database.reading { try await $0.storedLedger(customerId: "c\u{1}").rows(in: "Production") }
            #expect(Set(stored.values) == Set(rows) && stored.count == 2)
            // Written again unchanged and then changed, through the upsert's update.
            var changed = rows
            changed[0].refundAmount = 9990
            let again = changed
            try await database.writing { session in
                try await session.replaceLedger(customerId: "c\u{1}", environment: "Production", with: rows)
                try await session.replaceLedger(customerId: "c\u{1}", environment: "Production", with: again)
            }
            let rewritten = try await database.reading { try await $0.storedLedger(customerId: "c\u{1}").rows(in: "Production") }
            #expect(Set(rewritten.values) == Set(again))
        }
    }

    @Test(
        "a recompute's derived data: its events, its state and its changed ledger rows (the last two in one statement on PostgreSQL), the state also when no row changed",
        arguments: TestDatabase.available)
    func storeRecomputed(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            let rows = Self.unusual()
            func state(_ json: String, next: Int64?) -> StateRecord {
                StateRecord(customerId: "c\u{1}", environment: "Production", state: json, nextChangeAt: next, computedAt: 7)
            }
            @Sendable func events(_ session: StorageSession) async throws {
                try await session.sql.raw("INSERT INTO audit_log (app_id, action, detail, at) VALUES ('app_1', 'events', '{}', 1)").run()
            }
            let (first, second) = (state(#"{"a":1}"#, next: 99), state(#"{"a":2}"#, next: nil))
            try await database.writing { session in
                try await session.storeRecomputed(first, ledger: { rows }, stored: [:]) { try await events(session) }
            }
            var stored = try await database.reading { try await $0.storedLedger(customerId: "c\u{1}").rows(in: "Production") }
            #expect(Set(stored.values) == Set(rows) && stored.count == 2)
            #expect(try await database.reading { try await $0.state(customer: "c\u{1}", environment: "Production") } == first)

            // The ledger unchanged, the state changed: written all the same.
            let unchanged = stored
            try await database.writing { session in
                try await session.storeRecomputed(second, ledger: { rows }, stored: unchanged) { try await events(session) }
            }
            #expect(try await database.reading { try await $0.state(customer: "c\u{1}", environment: "Production") } == second)
            stored = try await database.reading { try await $0.storedLedger(customerId: "c\u{1}").rows(in: "Production") }
            #expect(Set(stored.values) == Set(rows))
            let marks = try await database.reading {
                try await $0.sql.raw("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'events'").first()?.decode(
                    column: "n", as: Int64.self)
            }
            #expect(marks == 2)
        }
    }

    @Test("SQLite updates a row changed outside the sums in place, setting what changed alone, and replaces the others")
    func outsideSumsUpdates() async throws {
        try await LedgerFormulaTests.withDatabase(.sqlite) { database in
            let rows = Self.unusual()
            try await LedgerFormulaTests.store(rows, in: database)
            // A row learning of its successor: the next period's columns change, nothing the sums read.
            var linked = rows[0]
            (linked.nextStart, linked.nextMonthlyPrice) = (1_772_582_400_000, 9990)
            let update = try #require(StorageSession.outsideSumsUpdate(linked, from: rows[0].written, to: linked.written))
            let text = try await database.reading { session in
                var serializer = SQLSerializer(database: session.sql)
                update.serialize(to: &serializer)
                return serializer.sql
            }
            #expect(
                text
                    == "UPDATE ledger SET next_start = ?1, next_monthly_price = ?2 WHERE app_id = ?3 AND environment = ?4 AND transaction_id = ?5"
            )
            #expect(StorageSession.outsideSumsUpdate(linked, from: linked.written, to: linked.written) == nil)
            // With a row whose sums move (refunded): only that one is replaced, its old values out of the summary and
            // its new ones in (two moves); the other moves nothing.
            var refunded = rows[1]
            refunded.refundedAt = 1_767_312_000_000
            let moves = SQLQueryString("SELECT COUNT(*) AS n FROM \(unsafeRaw: LedgerSummary.movesTable)")
            let before = try await database.reading { try await $0.sql.raw(moves).first()?.decode(column: "n", as: Int64.self) }
            let written = [linked, refunded]
            try await database.writing { try await $0.replaceLedger(customerId: "c\u{1}", environment: "Production", with: written) }
            let after = try await database.reading { try await $0.sql.raw(moves).first()?.decode(column: "n", as: Int64.self) }
            #expect(before.map { $0 + 2 } == after)
            let stored = try await database.reading { try await $0.storedLedger(customerId: "c\u{1}").rows(in: "Production") }
            #expect(Set(stored.values) == Set(written))
        }
    }

    @Test(
        "a customer's new rows are inserted and a transaction listed under another customer moves to it, in one write; the summary moves by each",
        arguments: TestDatabase.available)
    func newAndMovedRows(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            let (start, month) = (Int64(1_767_225_600_000), Int64(2_592_000_000))
            let first = LedgerFormulaTests.period("t1", chain: "o1", customer: "a", start: start, end: start + month)
            let second = LedgerFormulaTests.period("t2", chain: "o2", customer: "a", start: start, end: start + month)
            try await LedgerFormulaTests.store([first, second], in: database)
            var moved = second
            (moved.customerId, moved.price, moved.monthlyPrice) = ("b", 4990, 4990)
            let added = LedgerFormulaTests.period("t3", chain: "o3", customer: "b", start: start + month, end: start + 2 * month)
            let moves = SQLQueryString("SELECT COUNT(*) AS n FROM \(unsafeRaw: LedgerSummary.movesTable)")
            let before = try await database.reading { try await $0.sql.raw(moves).first()?.decode(column: "n", as: Int64.self) }
            let written = [moved, added]
            try await database.writing { try await $0.replaceLedger(customerId: "b", environment: "Production", with: written) }
            let a = try await database.reading { try await $0.storedLedger(customerId: "a").rows(in: "Production") }
            let b = try await database.reading { try await $0.storedLedger(customerId: "b").rows(in: "Production") }
            #expect(Set(a.values) == [first])
            #expect(Set(b.values) == [moved, added])
            // t3 in (one move), and t2 out and back in at its new price (two).
            let after = try await database.reading { try await $0.sql.raw(moves).first()?.decode(column: "n", as: Int64.self) }
            #expect(before.map { $0 + 3 } == after)
        }
    }

    @Test("a rates import finds the rows to convert through the index of non-USD rows (SQLite's plan)")
    func conversionUsesItsIndex() async throws {
        try await LedgerFormulaTests.withDatabase(.sqlite) { database in
            var plan = SQLQueryString("EXPLAIN QUERY PLAN ")
            plan.appendInterpolation(StorageSession.usdConversion(where: "currency IN ('EUR', 'JPY')"))
            let query = plan
            let details = try await database.reading { session in
                try await session.sql.raw(query).all().map { try $0.decode(column: "detail", as: String.self) }
            }
            #expect(details.contains { $0.contains("ledger_currency") }, "\(details)")
        }
    }

    @Test(
        "churn's lapses: on SQLite through the index of ends, which carries next_start (no partial index for every renewal to update); PostgreSQL keeps the partial index",
        arguments: TestDatabase.available)
    func lapsesIndex(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            let names: SQLQueryString =
                kind == .sqlite
                ? "SELECT name AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ledger'"
                : "SELECT indexname AS n FROM pg_indexes WHERE tablename = 'ledger'"
            let indexes = try await database.reading { session in
                Set(try await session.sql.raw(names).all().map { try $0.decode(column: "n", as: String.self) })
            }
            #expect(indexes.contains("ledger_active_until") && indexes.contains("ledger_start"), "\(indexes)")
            guard kind == .sqlite else {
                #expect(indexes.contains("ledger_lapses"), "\(indexes)")
                return
            }
            #expect(!indexes.contains("ledger_lapses"), "\(indexes)")
            let columns = try await database.reading { session in
                try await session.sql.raw("SELECT name FROM pragma_index_info('ledger_active_until') ORDER BY seqno").all()
                    .map { try $0.decode(column: "name", as: String.self) }
            }
            #expect(columns == ["app_id", "environment", "active_until", "next_start"])
        }
    }
}
