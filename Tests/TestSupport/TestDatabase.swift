import Foundation
import SQLKit
import Storage

/// The databases every database test runs on: SQLite always, PostgreSQL when `STOREKEEPER_TEST_POSTGRES_URL` is set
/// (`.ci/run` sets it). Each test gets its own SQLite file or its own PostgreSQL schema.
public enum TestDatabase: String, CaseIterable, Sendable {
    case sqlite, postgres

    public static var postgresURL: String? { ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"] }

    public static var available: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// A new, empty database location.
    public func fresh() async throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return .sqlite(path: directory.appendingPathComponent("test.sqlite").path)
        case .postgres:
            guard let url = Self.postgresURL else { throw HarnessError("STOREKEEPER_TEST_POSTGRES_URL is not set") }
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            let admin = try await StorageDatabase.open(.postgres(url: url))
            try await admin.transaction { try await $0.raw("CREATE SCHEMA \(unsafeRaw: String(schema))").run() }
            await admin.close()
            return .postgres(url: url, schema: String(schema))
        }
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
