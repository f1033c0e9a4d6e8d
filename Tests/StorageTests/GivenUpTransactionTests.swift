import Foundation
import NIOConcurrencyHelpers
import SQLKit
import TestSupport
import Testing

@testable import Storage

/// A database call that is given up (its deadline passed, or its caller went away) answers at once, and a transaction
/// it was running never commits behind the error.
@Suite("Given-up database calls")
struct GivenUpTransactionTests {
    /// On SQLite only: the check before COMMIT is the same code for both, and a PostgreSQL transaction held open here
    /// would hold back the event streams (their horizon is cluster-wide) of the tests running beside it.
    @Test("a transaction whose task is cancelled before its end rolls back instead of committing")
    func cancelledTransactionRollsBack() async throws {
        let database = try await StorageTests.database(.sqlite)
        let inserted = NIOLockedValueBox(false)
        let work = Task {
            try await database.transaction { sql in
                try await sql.raw("UPDATE apps SET updated_at = 99 WHERE id = 'app_1'").run()
                inserted.withLockedValue { $0 = true }
                // Finishes normally once cancelled: only the check before COMMIT stands between it and a commit.
                while !Task.isCancelled { await Task.yield() }
            }
        }
        while !inserted.withLockedValue({ $0 }) { await Task.yield() }
        work.cancel()
        await #expect(throws: CancellationError.self) { try await work.value }
        let row = try await database.read { try await $0.raw("SELECT updated_at FROM apps WHERE id = 'app_1'").first() }
        #expect(try row?.decode(column: "updated_at", as: Int64.self) == 1)
        await database.close()
    }

    @Test("past its deadline a call is answered unavailable at once, and its body is cancelled")
    func deadline() async throws {
        let cancelled = NIOLockedValueBox(false)
        // Without the deadline this body would return normally, a minute later.
        let error = await #expect(throws: StorageError.self) {
            try await StorageDatabase.withDeadline(.milliseconds(100)) {
                try? await Task.sleep(for: .seconds(60))
                cancelled.withLockedValue { $0 = Task.isCancelled }
            }
        }
        #expect(error?.code == .unavailable)
        for _ in 0..<200 where !cancelled.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.withLockedValue { $0 })
        // In time, the body's value comes back.
        #expect(try await StorageDatabase.withDeadline(.seconds(5)) { 42 } == 42)
    }

    @Test("the caller's cancellation reaches the body under a deadline, as in a structured call")
    func cancellationPropagates() async throws {
        let cancelled = NIOLockedValueBox(false)
        let started = NIOLockedValueBox(false)
        let call = Task {
            try await StorageDatabase.withDeadline(.seconds(60)) {
                started.withLockedValue { $0 = true }
                try? await Task.sleep(for: .seconds(60))
                cancelled.withLockedValue { $0 = Task.isCancelled }
            }
        }
        while !started.withLockedValue({ $0 }) { await Task.yield() }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        for _ in 0..<200 where !cancelled.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cancelled.withLockedValue { $0 })
    }
}
