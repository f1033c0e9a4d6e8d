import Analytics
import ArgumentParser
import Foundation
import Storage
import StorekeeperCore

/// `storekeeper export`: customers, transactions, the ledger and events as gzip files for the operator's own pipeline.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the export views (customers, transactions, ledger, events) as gzip CSV or JSON lines, with a manifest.",
        discussion: """
            The files follow docs/export.md (schema version \(ExportViews.schemaVersion)). With --every, the command keeps
            running and writes a new folder under --to at each interval (named by the export's time), the last one also as
            latest/.
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The folder to write to.") var to: String
    @Option(help: "csv (default) or jsonl.") var format: String = "csv"
    @Option(help: "Only this app's rows (default: every app's).") var app: String?
    @Option(help: "From this day (YYYY-MM-DD, UTC), by each view's instant: created, received, started, recorded.") var from: String?
    @Option(help: "Until this day, excluded (YYYY-MM-DD, UTC).") var until: String?
    @Option(help: "Export again every this many hours, into a new folder each time (the schedule).") var every: Double?

    func validate() throws {
        guard DataExport.Format(rawValue: format) != nil else { throw ValidationError("--format is csv or jsonl") }
        if let every, !(every > 0) { throw ValidationError("--every is a number of hours above 0") }
        for (name, day) in [("from", from), ("until", until)] where day != nil && CalendarDayText.milliseconds(day) == nil {
            throw ValidationError("--\(name) is a day written YYYY-MM-DD")
        }
    }

    func run() async throws {
        let range = ExportRange(appId: app, from: CalendarDayText.milliseconds(from), until: CalendarDayText.milliseconds(until))
        let format = DataExport.Format(rawValue: format) ?? .csv
        try await database.withCore { core in
            if let app { _ = try await core.apps.app(id: app) }
            guard let every else {
                try Self.report(try await core.export.write(to: URL(fileURLWithPath: to), format: format, range: range, now: core.now))
                return
            }
            while !Task.isCancelled {
                let now = core.now
                let folder = URL(fileURLWithPath: to).appendingPathComponent(Self.folderName(now))
                try Self.report(try await core.export.write(to: folder, format: format, range: range, now: now))
                let latest = URL(fileURLWithPath: to).appendingPathComponent("latest")
                try? FileManager.default.removeItem(at: latest)
                try FileManager.default.createSymbolicLink(at: latest, withDestinationURL: folder)
                try await Task.sleep(for: .seconds(every * 3600))
            }
        }
    }

    static func folderName(_ now: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(now) / 1000)).replacingOccurrences(of: ":", with: "")
    }

    static func report(_ manifest: DataExport.Manifest) throws {
        print(manifest.files.map { "\($0.name): \($0.rows) rows" }.joined(separator: ", "))
    }
}

/// A day on the command line, as the epoch milliseconds of its start (UTC).
enum CalendarDayText {
    static func milliseconds(_ text: String?) -> Int64? {
        guard let text, let day = CalendarDay(text) else { return nil }
        return day.daysSinceEpoch * 86_400_000
    }
}

/// `storekeeper sql-role`: read-only PostgreSQL roles for SQL users.
struct SQLRoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql-role", abstract: "PostgreSQL roles that read the export views and nothing else.", subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Create a role that logs in and reads only export_customers, export_transactions, export_ledger and export_events; prints its password once."
        )
        @OptionGroup var database: DatabaseOptions
        @Option(help: "The role's name (lower-case letters, digits, _).") var name: String

        func run() async throws {
            let password = APIKeys.randomToken(bytes: 18)
            try await database.withCore { core in
                do {
                    try await core.database.writing { try await $0.createAnalystRole(name: name, password: password) }
                } catch let error as StorageError {
                    throw UsageError(message: error.message)
                }
            }
            print("role \(name) created; its password (shown once): \(password)")
            print("it reads: " + ExportViews.views.map(\.name).joined(separator: ", "))
        }
    }
}
