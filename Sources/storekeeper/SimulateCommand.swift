import AppStoreSimulator
import ArgumentParser
import Foundation

/// `storekeeper simulate`: the local App Store. Its CA lives in a state folder (`.storekeeper-simulator` in the
/// working directory unless `--state` says otherwise), so that what it signs keeps verifying across runs.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate", abstract: "The local App Store simulator.",
        subcommands: [CA.self, CatalogCommand.self, Run.self, PopulationCommand.self, Scenarios.self, Rates.self])

    struct Rates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the exchange rates the simulator's storefront prices imply, as CSV for `storekeeper rates import`.")

        func run() async throws { print(Storefront.ratesCSV(), terminator: "") }
    }

    struct CA: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make (once) the simulator's certificate authority and export its root, for an app's trusted roots.")

        @Option(help: "Write the root certificate (DER) here.") var export: String
        @Option(help: "The state folder (default: ./.storekeeper-simulator).") var state: String?

        func run() async throws {
            let directory = state.map { URL(fileURLWithPath: $0) } ?? SimulatorCA.defaultStateDirectory
            let ca: SimulatorCA
            do { ca = try SimulatorCA.loadOrCreate(in: directory) } catch {
                FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
                throw ExitCode(1)
            }
            guard FileManager.default.createFile(atPath: export, contents: Data(ca.rootDER)) else {
                throw UsageError(message: "cannot write \(export)")
            }
            print("wrote the simulator's root certificate to \(export) (state: \(directory.path))")
        }
    }
}
