import ArgumentParser
import Foundation

@main
struct Storekeeper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storekeeper",
        abstract: "A self-hosted subscription backend for App Store apps.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, AppsCommand.self, ReconcileCommand.self, SimulateCommand.self, VerifyCommand.self,
            EntitlementsCommand.self, ExperimentCommand.self, RatesCommand.self, AnalyticsCommand.self, UsersCommand.self,
        ]
    )

    /// Exit codes are part of the interface: 0 success, 1 the input was rejected, 2 the command was called wrongly.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            Foundation.exit(2)
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// The command was called wrongly (a missing file, a bad option value): exit 2.
struct UsageError: Error {
    var message: String
}
