import ArgumentParser
import Foundation
import StorekeeperCore

/// `storekeeper users …`: the people who sign in to the dashboard.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Manage dashboard users.", subcommands: [Create.self, List.self, SetPassword.self, Delete.self])

    struct Created: Encodable {
        var id: String
        var email: String
        var allApps: Bool
        var apps: [String]
        /// Generated: shown this once, never stored.
        var password: String?
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a dashboard user; prints it as JSON, with a generated password (shown only once) unless --password-stdin.")

        @OptionGroup var database: DatabaseOptions
        @Option(help: "The email the user signs in with.") var email: String
        @Option(help: "The app ids the user may see, comma-separated.") var apps: String?
        @Flag(name: .customLong("all-apps"), help: "The user may see every app, present and future.") var allApps = false
        @Flag(name: .customLong("password-stdin"), help: "Read the password (12 to 72 bytes) from the first line of standard input.")
        var passwordFromStdin = false

        func run() async throws {
            let appIds = (apps ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard allApps || !appIds.isEmpty else { throw UsageError(message: "give --apps app1,app2 or --all-apps") }
            guard !(allApps && !appIds.isEmpty) else { throw UsageError(message: "give --apps or --all-apps, not both") }
            let password = passwordFromStdin ? try UsersCommand.readPassword() : nil
            try await database.withCore { core in
                let (user, generated) = try await core.dashboardAccounts.create(
                    email: email, password: password, apps: appIds, allApps: allApps)
                try printJSON(Created(id: user.id, email: user.email, allApps: user.allApps, apps: user.apps, password: generated))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List dashboard users and the apps they may see, as JSON.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await database.withCore { core in
                let users = try await core.dashboardAccounts.users()
                try printJSON(users.map { Created(id: $0.id, email: $0.email, allApps: $0.allApps, apps: $0.apps, password: nil) })
            }
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password",
            abstract: "Set a user's password (generated and printed, or read with --password-stdin); ends any lockout.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "The user's email.") var email: String
        @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.")
        var passwordFromStdin = false

        func run() async throws {
            let password = passwordFromStdin ? try UsersCommand.readPassword() : nil
            try await database.withCore { core in
                if let generated = try await core.dashboardAccounts.resetPassword(email: email, password: password) {
                    print(generated)
                }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a dashboard user.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "The user's email.") var email: String

        func run() async throws {
            try await database.withCore { try await $0.dashboardAccounts.delete(email: email) }
        }
    }

    static func readPassword() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw UsageError(message: "--password-stdin: standard input held no password")
        }
        return line
    }

}
