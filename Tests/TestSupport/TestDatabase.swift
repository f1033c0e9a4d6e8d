import Foundation
import SQLKit
import Storage

/// The databases every database test runs on: SQLite always, PostgreSQL when `STOREKEEPER_TEST_POSTGRES_URL` is set
/// (`.ci/run` sets it). Each test gets its own SQLite file or its own PostgreSQL schema, in this process's `TestRun`.
public enum TestDatabase: String, CaseIterable, Sendable {
    case sqlite, postgres

    public static var postgresURL: String? { ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"] }

    public static var available: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// A new, empty database location.
    public func fresh() async throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let directory = try TestRun.scratch("database")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return .sqlite(path: directory.appendingPathComponent("test.sqlite").path)
        case .postgres:
            guard let url = Self.postgresURL else { throw HarnessError("STOREKEEPER_TEST_POSTGRES_URL is not set") }
            await Self.schemasSwept.value
            let schema = try TestRun.schemaName()
            let admin = try await StorageDatabase.open(.postgres(url: url))
            try await admin.transaction { try await $0.raw("CREATE SCHEMA \(unsafeRaw: schema)").run() }
            await admin.close()
            return .postgres(url: url, schema: schema)
        }
    }

    /// The sweep of dead runs' schemas (`TestRun.sweepSchemas`), started by the first PostgreSQL test of the process.
    /// Its failure is told, not fatal: the tests do not depend on it.
    private static let schemasSwept = Task {
        guard let url = postgresURL else { return }
        do {
            try await TestRun.sweepSchemas(url: url)
        } catch {
            FileHandle.standardError.write(Data("warning: dead test runs' schemas were not dropped: \(error)\n".utf8))
        }
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
