import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import Storage

/// `AbsentAppUsers`: app user ids found naming no customer, remembered only while no write of this process can have
/// named a customer by them since.
@Suite("Storage: app user ids known absent")
struct AbsentAppUsersTests {
    struct Refused: Error {}

    /// A transaction body creating the customer `appUserId` names in app_1.
    static func naming(_ appUserId: String) -> @Sendable (StorageSession) async throws -> Void {
        { session in
            _ = try await session.findOrCreateCustomer(
                app: "app_1", appUserId: appUserId, anonymous: false, newId: UUID().uuidString, at: 1)
        }
    }

    @Test(
        "a read's finding is remembered; a transaction naming a customer by that id forgets it when it commits",
        arguments: TestDatabase.available)
    func forgottenByTheNamingWrite(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        let absent = database.absentAppUsers
        #expect(!absent.contains(app: "app_1", appUserId: "alice", isFresh: { _ in true }))
        #expect(absent.remember(app: "app_1", appUserId: "alice", readSince: absent.mark()))
        #expect(absent.remember(app: "app_1", appUserId: "bob", readSince: absent.mark()))
        #expect(absent.contains(app: "app_1", appUserId: "alice", isFresh: { _ in true }))
        // Too old for the caller's rule (another process may have named it since), given when the read began.
        let readAt = absent.mark()
        #expect(absent.remember(app: "app_1", appUserId: "alice", readSince: readAt))
        #expect(!absent.contains(app: "app_1", appUserId: "alice", isFresh: { _ in false }))
        let seen = NIOLockedValueBox<UInt64?>(nil)
        #expect(
            absent.contains(
                app: "app_1", appUserId: "alice",
                isFresh: { readAt in
                    seen.withLockedValue { $0 = readAt }
                    return true
                }))
        #expect(seen.withLockedValue { $0 } == readAt.readAt)
        // Another app's alice is someone else.
        #expect(!absent.contains(app: "app_2", appUserId: "alice", isFresh: { _ in true }))

        try await database.writing(Self.naming("alice"))
        #expect(!absent.contains(app: "app_1", appUserId: "alice", isFresh: { _ in true }))
        #expect(absent.contains(app: "app_1", appUserId: "bob", isFresh: { _ in true }))

        // An alias names a customer too.
        try await database.writing { session in
            let alice = try #require(try await session.customer(app: "app_1", appUserId: "alice"))
            try await session.addAppUserId(app: "app_1", appUserId: "bob", customer: alice.id, at: 2)
        }
        #expect(!absent.contains(app: "app_1", appUserId: "bob", isFresh: { _ in true }))
        await database.close()
    }

    @Test(
        "a finding is not remembered when a naming transaction was under way as the read began, or began during it",
        arguments: TestDatabase.available)
    func notRememberedAcrossANamingWrite(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        let absent = database.absentAppUsers
        let named = AsyncStream<Void>.makeStream()
        let proceed = AsyncStream<Void>.makeStream()
        let writer = Task {
            try await database.writing { session in
                try await Self.naming("carol")(session)
                named.continuation.yield()
                for await _ in proceed.stream { break }
            }
        }
        var signals = named.stream.makeAsyncIterator()
        _ = await signals.next()
        // Under way when the read began: its commit may come after the read looked.
        let duringWrite = absent.mark()
        #expect(!absent.remember(app: "app_1", appUserId: "carol", readSince: duringWrite))
        proceed.continuation.yield()
        try await writer.value
        #expect(!absent.contains(app: "app_1", appUserId: "carol", isFresh: { _ in true }))
        #expect(!absent.remember(app: "app_1", appUserId: "dave", readSince: duringWrite))

        // Begun after the read began.
        let beforeWrite = absent.mark()
        try await database.writing(Self.naming("erin"))
        #expect(!absent.remember(app: "app_1", appUserId: "dave", readSince: beforeWrite))

        // A transaction that writes no name does not stop a finding being remembered.
        let quiet = absent.mark()
        try await database.writing { session in
            _ = try await session.customer(app: "app_1", appUserId: "dave")
        }
        #expect(absent.remember(app: "app_1", appUserId: "dave", readSince: quiet))
        await database.close()
    }

    @Test("a naming transaction that rolls back ends too: findings are remembered again after it", arguments: TestDatabase.available)
    func rolledBack(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        let absent = database.absentAppUsers
        await #expect(throws: Refused.self) {
            try await database.writing { session in
                try await Self.naming("frank")(session)
                throw Refused()
            }
        }
        let frank = try await database.reading { try await $0.customer(app: "app_1", appUserId: "frank") }
        #expect(frank == nil)
        #expect(absent.remember(app: "app_1", appUserId: "frank", readSince: absent.mark()))
        #expect(absent.contains(app: "app_1", appUserId: "frank", isFresh: { _ in true }))
        await database.close()
    }
}

/// `PRAGMA data_version` on the SQLite writer: what tells this process that another one wrote.
@Suite("Storage: other processes' writes on SQLite")
struct OtherProcessesVersionTests {
    @Test(
        "this process's writes leave it as it is; another connection's commit changes it; nil on PostgreSQL",
        arguments: TestDatabase.available)
    func version(kind: TestDatabase) async throws {
        let database = try await StorageTests.database(kind)
        guard case .sqlite = database.location else {
            #expect(try await database.sqliteOtherProcessesVersion() == nil)
            await database.close()
            return
        }
        let first = try #require(try await database.sqliteOtherProcessesVersion())
        try await database.writing(AbsentAppUsersTests.naming("grace"))
        _ = try await database.reading { try await $0.customer(app: "app_1", appUserId: "grace") }
        #expect(try await database.sqliteOtherProcessesVersion() == first)
        // Another process: another connection to the same file.
        let other = try await StorageDatabase.open(database.location)
        try await other.writing(AbsentAppUsersTests.naming("heidi"))
        await other.close()
        #expect(try await database.sqliteOtherProcessesVersion() != first)
        await database.close()
    }
}
