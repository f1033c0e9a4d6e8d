import Foundation
import NIOConcurrencyHelpers
import SQLKit
import TestSupport
import Testing

@testable import Storage

/// SQLite's group commit (`SQLiteWriter`): transactions that wait for the writer share one commit, each in a savepoint.
@Suite("Storage: SQLite group commit")
struct GroupCommitTests {
    struct Refused: Error {}

    @Test("concurrent writers share commits; each is answered only once its work is committed; a failing one alone is rolled back")
    func sharedCommits() async throws {
        let database = try await StorageTests.database(.sqlite)
        let writers = 60
        let before = try #require(database.sqliteCommitStatistics)
        let seenUncommitted = NIOLockedValueBox<[Int]>([])
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    do {
                        try await database.writing { session in
                            try await session.sql.raw(
                                "INSERT INTO exchange_rates (currency, day, usd_per_unit) VALUES (\(bind: "C\(writer)"), 1, 1.5)"
                            ).run()
                            // Long enough for the others to queue behind this one.
                            try await Task.sleep(for: .milliseconds(2))
                            if writer % 6 == 0 { throw Refused() }
                        }
                    } catch is Refused {
                        return (writer, false)
                    }
                    // Answered: a reader (outside the writer's transaction) must see the row now.
                    let visible = try await database.reading {
                        try await $0.sql.raw("SELECT COUNT(*) AS n FROM exchange_rates WHERE currency = \(bind: "C\(writer)")")
                            .first()?.decode(column: "n", as: Int.self)
                    }
                    if visible != 1 { seenUncommitted.withLockedValue { $0.append(writer) } }
                    return (writer, true)
                }
            }
            return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes.count == writers)
        #expect(outcomes.filter { !$0.value }.keys.sorted() == Array(stride(from: 0, to: writers, by: 6)))
        #expect(seenUncommitted.withLockedValue { $0 } == [])
        let stored = try await database.reading {
            try await $0.sql.raw("SELECT currency FROM exchange_rates WHERE currency LIKE 'C%'").all(
                decodingColumn: "currency", as: String.self)
        }
        #expect(Set(stored) == Set(outcomes.filter(\.value).map { "C\($0.key)" }))
        let after = try #require(database.sqliteCommitStatistics)
        // The 50 that returned, in far fewer commits.
        let transactions = after.transactions - before.transactions
        #expect(transactions == writers - (writers + 5) / 6)
        #expect(after.commits - before.commits < transactions / 2)
        await database.close()
    }

    @Test("a checkpoint or pragma waiting for the writer is taken between two commits, not inside a batch")
    func exclusiveBetweenBatches() async throws {
        let database = try await StorageTests.database(.sqlite)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<20 {
                group.addTask {
                    try await database.writing { session in
                        try await session.sql.raw(
                            "INSERT INTO exchange_rates (currency, day, usd_per_unit) VALUES (\(bind: "X\(writer)"), 1, 1.5)"
                        ).run()
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
                if writer == 5 {
                    // SQLite refuses VACUUM inside a transaction ("cannot VACUUM from within a transaction").
                    group.addTask { try await database.onSQLiteWriter("VACUUM") }
                }
            }
            try await group.waitForAll()
        }
        let count = try await database.reading {
            try await $0.sql.raw("SELECT COUNT(*) AS n FROM exchange_rates WHERE currency LIKE 'X%'").first()?.decode(
                column: "n", as: Int.self)
        }
        #expect(count == 20)
        await database.close()
    }
}
