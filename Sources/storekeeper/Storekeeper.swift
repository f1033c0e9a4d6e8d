import ArgumentParser
import Foundation
import StorekeeperCore

@main
struct Storekeeper: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storekeeper",
        abstract: "A self-hosted subscription backend for App Store apps.",
        version: Release.description,
        subcommands: [
            ServeCommand.self, MigrateCommand.self, AppsCommand.self, ReconcileCommand.self, SimulateCommand.self, VerifyCommand.self,
            EntitlementsCommand.self, ExperimentCommand.self, RatesCommand.self, AnalyticsCommand.self, UsersCommand.self,
            KeysCommand.self, RetentionCommand.self, ImportCommand.self, ExportCommand.self, SQLRoleCommand.self,
        ]
    )

    /// Exit codes are part of the interface: 0 success, 1 the input was rejected, 2 the command was called wrongly.
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            // The arguments themselves are wrong: the message and the usage.
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            Foundation.exit(2)
        } catch let error as ValidationError {
            // Found while running (a file that cannot be read): the error alone, the usage is not what went wrong.
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            Foundation.exit(2)
        } catch {
            exit(withError: error)
        }
    }
}

/// The command was called wrongly (a missing file, a bad option value): exit 2.
struct UsageError: Error {
    var message: String
}
