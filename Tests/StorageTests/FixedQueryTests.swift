import Foundation
import SQLKit
import Storage
import TestSupport
import Testing

/// Fixed queries: prepared once per connection on PostgreSQL, run as any statement on SQLite, with the same answers.
@Suite("Storage: fixed queries")
struct FixedQueryTests {
    /// Its parameters out of order, one repeated, and a `$` that names none.
    enum Echo: FixedQuery {
        static let name = "storekeeper_test_echo"
        static let postgres = "SELECT $2::text AS b, $1::text AS a, $1::text || '$' || COALESCE($2::text, '-') AS joined"
        static let sqlite: String? = "SELECT $2 AS b, $1 AS a, $1 || '$' || COALESCE($2, '-') AS joined"
    }

    enum PostgresOnly: FixedQuery {
        static let name = "storekeeper_test_postgres_only"
        static let postgres = "SELECT 1 AS one"
        static let sqlite: String? = nil
    }

    enum TooFew: FixedQuery {
        static let name = "storekeeper_test_too_few"
        static let postgres = "SELECT $3::text AS c"
        static let sqlite: String? = "SELECT $3 AS c"
    }

    static func answer(_ session: StorageSession, _ binds: [String?]) async throws -> [String?] {
        let row = try #require(try await session.run(Echo.self, binds).first)
        return try ["a", "b", "joined"].map { try row.decode(column: $0, as: String?.self) }
    }

    @Test("binds go to their $n, again and again on one connection and across connections", arguments: TestDatabase.available)
    func binds(_ kind: TestDatabase) async throws {
        let database = try await StorageDatabase.open(try await kind.fresh())
        do {
            try await database.writing { session async throws in
                #expect(try await Self.answer(session, ["x", "y"]) == ["x", "y", "x$y"])
                // The second run on this connection uses the statement prepared by the first.
                #expect(try await Self.answer(session, ["it's", nil]) == ["it's", nil, "it's$-"])
                if kind == .postgres {
                    let prepared = try await session.sql.raw("SELECT name FROM pg_prepared_statements").all()
                        .map { try $0.decode(column: "name", as: String.self) }
                    #expect(prepared.contains(Echo.name), "a transaction's connection runs fixed queries as prepared statements")
                }
            }
            for _ in 0..<3 {
                let answer = try await database.reading { try await Self.answer($0, ["1", "2"]) }
                #expect(answer == ["1", "2", "1$2"])
            }
            await #expect(throws: StorageError.self) {
                _ = try await database.reading { try await $0.run(TooFew.self, ["1", "2"]) }
            }
            if kind == .sqlite {
                let error = await #expect(throws: StorageError.self) {
                    _ = try await database.reading { try await $0.run(PostgresOnly.self, []) }
                }
                #expect(error?.code == .misuse)
            } else {
                let one = try await database.reading { try await $0.run(PostgresOnly.self, []).first?.decode(column: "one", as: Int.self) }
                #expect(one == 1)
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}
