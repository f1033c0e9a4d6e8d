import ArgumentParser
import Foundation
import Storage
import StorekeeperCore

struct RatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rates", abstract: "Exchange rates to USD, the reporting currency.", subcommands: [Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Load rates from CSV: 'date,currency,usd_per_unit' lines, or the ECB's reference rates ('Date,USD,JPY,…' per euro).",
            discussion: "A rate already stored for a currency and day is replaced; the ledger is converted again.")

        @Argument(help: "The CSV file ('-' for standard input).") var file: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let data: Data
            if file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let read = FileManager.default.contents(atPath: file) else { throw UsageError(message: "cannot read \(file)") }
                data = read
            }
            let settings = try database.settings().core
            let core = try await openCore(settings, logger: DatabaseOptions.logger(.warning))
            do {
                let count = try await core.analytics.importRates(csv: String(decoding: data, as: UTF8.self))
                let coverage = try await core.analytics.rateCoverage()
                await core.database.close()
                print("imported \(count) rates")
                for entry in coverage { print("\(entry.currency): \(entry.count) rates, \(entry.first) to \(entry.last)") }
            } catch let error as CoreError {
                await core.database.close()
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}

struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics", abstract: "The money ledger the metrics are computed from.", subcommands: [Rebuild.self])

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rebuild",
            abstract: "Recompute every customer's ledger (and state and events) from the stored facts.",
            discussion: "Run it after changing an app's catalog or proceeds settings, or after upgrading to a version with a new ledger.")

        @Option(help: "Only this app (default: every app).") var app: String?
        @Flag(
            help:
                "Only compute the hourly summary again from the ledger as it stands, without recomputing customers (after ledger rows were loaded by other means, as the analytics benchmark does)."
        )
        var summaryOnly = false
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let settings = try database.settings().core
            let core = try await openCore(settings, logger: DatabaseOptions.logger(.warning))
            do {
                let ids: [String]
                if let app { ids = [app] } else { ids = try await core.database.reading { try await $0.apps() }.map(\.id) }
                for id in ids {
                    let runtime = try await core.apps.app(id: id)
                    if summaryOnly {
                        try await core.analytics.rebuildSummary(runtime)
                        print("\(id): summary rebuilt")
                        continue
                    }
                    let count = try await core.analytics.rebuild(runtime)
                    print("\(id): \(count) customers rebuilt")
                }
                await core.database.close()
            } catch let error as CoreError {
                await core.database.close()
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
