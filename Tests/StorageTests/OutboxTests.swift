import Storage
import TestSupport
import Testing

/// The outbox as events are synced: one delivery per written version of an event and destination that takes it, on
/// both databases.
@Suite("Outbox")
struct OutboxTests {
    static func destination(_ id: String, events: [String]?, environments: [String], enabled: Bool = true) -> IntegrationRecord {
        IntegrationRecord(
            id: id, appId: "app_1", kind: "webhook", name: id, config: "{}", events: events, environments: environments,
            enabled: enabled, disabledReason: nil, retrySchedule: nil, createdAt: 1, updatedAt: 1)
    }

    static func event(_ id: String, type: String) -> EventRecord {
        EventRecord(
            appId: "app_1", eventId: id, originalTransactionId: "1000", customerId: "c_1", environment: "Sandbox", type: type,
            effectiveAt: 5, payload: #"{"id":"\#(id)"}"#, recordedAt: 7)
    }

    /// A delivery as compared here: who, which version, whether it sends a retraction, and its fresh state.
    struct Row: Hashable {
        var integration: String
        var seq: Int64
        var eventId: String
        var retraction: Bool
        var status: DeliveryStatus
        var due: Int64?
    }

    static func rows(_ database: StorageDatabase) async throws -> Set<Row> {
        try await database.reading { session in
            var rows = Set<Row>()
            for id in ["all", "renewals", "production", "paused"] {
                for d in try await session.deliveries(integration: id, status: nil, beforeSeq: nil, limit: 100) {
                    rows.insert(
                        Row(
                            integration: d.integrationId, seq: d.eventSeq, eventId: d.eventId, retraction: d.retraction, status: d.status,
                            due: d.nextAttemptAt))
                }
            }
            return rows
        }
    }

    static func seq(_ database: StorageDatabase, _ eventId: String) async throws -> Int64 {
        let stored = try await database.reading { try await $0.events(app: "app_1", ids: [eventId]) }
        return try #require(stored.first?.seq)
    }

    @Test(
        "each written version gets a delivery per destination that takes it (paused ones too), with its retraction flag",
        arguments: TestDatabase.available)
    func deliveriesOfSyncedEvents(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        try await database.writing { session in
            try await session.insertIntegration(Self.destination("all", events: nil, environments: ["Sandbox"]), secrets: "{}")
            try await session.insertIntegration(
                Self.destination("renewals", events: ["renewal"], environments: ["Sandbox", "Production"]), secrets: "{}")
            try await session.insertIntegration(Self.destination("production", events: nil, environments: ["Production"]), secrets: "{}")
            try await session.insertIntegration(
                Self.destination("paused", events: nil, environments: ["Sandbox"], enabled: false), secrets: "{}")
        }
        let start = Self.event("e_start", type: "start")
        let renewal = Self.event("e_renewal", type: "renewal")
        // What a sync recorded and retracted.
        func sync(_ derived: [EventRecord], at now: Int64) async throws -> [Int] {
            try await database.writing { session in
                let changed = try await session.syncEvents(
                    app: "app_1", environment: "Sandbox", originalTransactionIds: ["1000"], derived: derived, at: now)
                return [changed.recorded, changed.retracted]
            }
        }
        func expected(_ eventId: String, seq: Int64, retraction: Bool, due: Int64, to integrations: [String]) -> Set<Row> {
            Set(
                integrations.map {
                    Row(integration: $0, seq: seq, eventId: eventId, retraction: retraction, status: .pending, due: due)
                })
        }

        #expect(try await sync([start, renewal], at: 100) == [2, 0])
        var want = expected("e_start", seq: try await Self.seq(database, "e_start"), retraction: false, due: 100, to: ["all", "paused"])
        want.formUnion(
            expected(
                "e_renewal", seq: try await Self.seq(database, "e_renewal"), retraction: false, due: 100,
                to: ["all", "renewals", "paused"]))
        #expect(try await Self.rows(database) == want)

        // The same events again: nothing written, nothing queued.
        #expect(try await sync([start, renewal], at: 150) == [0, 0])
        #expect(try await Self.rows(database) == want)

        // The renewal no longer derived: its retraction is a new version, delivered as one. The renewal is the last row
        // of the stream, and its retraction still comes after it: a reader past it sees the retraction.
        let seen = try #require(try await database.reading { try await $0.events(app: "app_1", ids: ["e_renewal"]) }.first)
        #expect(try await sync([start], at: 200) == [0, 1])
        let retracted = try await Self.seq(database, "e_renewal")
        #expect(retracted > (seen.seq ?? .max))
        let after = try await database.reading {
            try await $0.events(
                app: "app_1", after: EventCursor(txOrder: seen.txOrder ?? 0, seq: seen.seq ?? 0), limit: 10, settledOnly: false)
        }
        #expect(after.map(\.eventId) == ["e_renewal"] && after.first?.retractedAt == 200)
        want.formUnion(expected("e_renewal", seq: retracted, retraction: true, due: 200, to: ["all", "renewals", "paused"]))
        #expect(try await Self.rows(database) == want)

        // Derived again: restored as a third version, delivered as recorded.
        #expect(try await sync([start, renewal], at: 300) == [1, 0])
        let restored = try await Self.seq(database, "e_renewal")
        #expect(restored > retracted)
        want.formUnion(expected("e_renewal", seq: restored, retraction: false, due: 300, to: ["all", "renewals", "paused"]))
        #expect(try await Self.rows(database) == want)
        await database.close()
    }

    @Test("an app without destinations syncs its events and queues nothing", arguments: TestDatabase.available)
    func noDestinations(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        let recorded = try await database.writing { session in
            try await session.syncEvents(
                app: "app_1", environment: "Sandbox", originalTransactionIds: ["1000"],
                derived: [Self.event("e_start", type: "start")], at: 100
            ).recorded
        }
        #expect(recorded == 1)
        #expect(try await Self.rows(database).isEmpty)
        let count = try await database.reading { session in
            try await session.sql.raw("SELECT COUNT(*) AS n FROM deliveries").first().map { try $0.decode(column: "n", as: Int.self) }
        }
        #expect(count == 0)
        await database.close()
    }
}
