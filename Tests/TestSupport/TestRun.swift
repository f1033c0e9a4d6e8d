import Foundation
import SQLKit
import Storage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one test process leaves on the machine, and its removal.
///
/// Every file a test makes (SQLite databases, simulator state, CLI inputs) goes in the run's own directory,
/// `$TMPDIR/storekeeper-test-run-<id>/`, removed when the process exits; every PostgreSQL schema a test makes is named
/// `tr_<id>_…`. The run holds an exclusive `flock` on `storekeeper-test-run-<id>.lock` for as long as it lives (the kernel
/// releases it however the process ends), so a later run can tell the leftovers of a run that died (a crash, a kill, a
/// run interrupted by hand) from a run still going, and removes only the first: its directory, its lock file and, on a
/// PostgreSQL server on this machine, its schemas.
///
/// Before this, every SQLite test database (up to 300 MB for the bulk tests) and every PostgreSQL schema stayed behind:
/// a few dozen CI runs filled a 250 GB disk.
public struct TestRun: Sendable {
    /// 12 lowercase hex digits.
    public let id: String
    /// The run's directory: everything a test writes goes under it.
    public let directory: URL

    static let filePrefix = "storekeeper-test-run-"
    static let schemaPrefix = "tr_"

    /// This process's run, made (and the machine swept of dead runs' files) on first use.
    public static func current() throws -> TestRun { try started.get() }

    /// A new path in the run's directory, named `<name>-<uuid>`; nothing is created there.
    public static func scratch(_ name: String) throws -> URL {
        try current().directory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    }

    /// A new PostgreSQL schema name of this run.
    static func schemaName() throws -> String { try schemaPrefix + current().id + "_" + newId() }

    /// 12 random lowercase hex digits: a run's id, or what tells a run's schemas apart.
    static func newId() -> String { String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)) }

    /// Creates the run `id`'s lock file and takes its lock; the descriptor returned holds it until closed (or the
    /// process ends).
    static func claim(_ id: String) throws -> Int32 {
        let path = lockPath(id)
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HarnessError("open \(path): errno \(errno)") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            throw HarnessError("flock \(path): errno \(failure)")
        }
        return descriptor
    }

    private static let started: Result<TestRun, HarnessError> = Result {
        let run = try start()
        atexit { TestRun.removeOwnFiles() }
        return run
    }.mapError { HarnessError("the test run cannot claim its scratch space: \($0)") }

    static var temporary: URL { FileManager.default.temporaryDirectory }

    static func lockPath(_ id: String) -> String { temporary.appendingPathComponent(filePrefix + id + ".lock").path }

    private static func start() throws -> TestRun {
        let id = newId()
        // The lock first, then the directory: a directory with no lock file is a dead run's. The descriptor stays open,
        // and the lock held, until the process ends.
        _ = try claim(id)
        sweepFiles(except: id)
        let directory = temporary.appendingPathComponent(filePrefix + id, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return TestRun(id: id, directory: directory)
    }

    private static func removeOwnFiles() {
        guard case .success(let run) = started else { return }
        try? FileManager.default.removeItem(at: run.directory)
        unlink(lockPath(run.id))
    }

    /// Runs `body` if the run `id` is over (its lock file is gone, or nobody holds it), holding its lock meanwhile so
    /// two sweeps do not both clean it; then removes the lock file. Returns whether the run was over.
    @discardableResult
    static func ifOver(_ id: String, _ body: () throws -> Void) rethrows -> Bool {
        let path = lockPath(id)
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        if descriptor < 0 {
            guard errno == ENOENT else { return false }
            try body()
            return true
        }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        try body()
        unlink(path)
        return true
    }

    /// Removes the directories and lock files of runs that are over.
    static func sweepFiles(except own: String) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: temporary.path) else { return }
        for id in Set(names.filter { $0.hasPrefix(filePrefix) }.map { String($0.dropFirst(filePrefix.count).prefix(12)) }) where id != own {
            ifOver(id) { try? manager.removeItem(at: temporary.appendingPathComponent(filePrefix + id, isDirectory: true)) }
        }
    }

    /// Drops the schemas of runs that are over, on a PostgreSQL server on this machine (a remote one may serve runs on
    /// other machines, whose locks are not here to see): once per process, before its first schema.
    static func sweepSchemas(url: String) async throws {
        guard let host = URLComponents(string: url)?.host, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else { return }
        let own = try current().id
        let database = try await StorageDatabase.open(.postgres(url: url))
        do {
            let schemas = try await database.read { sql in
                try await sql.raw("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'tr\\_%'")
                    .all().map { try $0.decode(column: "nspname", as: String.self) }
            }
            let byRun = Dictionary(grouping: schemas) { String($0.dropFirst(schemaPrefix.count).prefix(12)) }
            for (run, schemas) in byRun where run != own {
                guard ifOver(run, {}) else { continue }
                for schema in schemas {
                    try await database.transaction { try await $0.raw("DROP SCHEMA IF EXISTS \(ident: schema) CASCADE").run() }
                }
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}
