import ArgumentParser
import Foundation
import StorekeeperCore

/// `storekeeper keys signing`: the root public key the server signs the customer API's answers with, for the app's
/// `Configuration.signingKey` (README "Answers the device can trust").
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "The server's own keys.", subcommands: [Signing.self])

    struct Signing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the root public key the server signs answers with (base64), for the app's signingKey. The private half is STOREKEEPER_SIGNING_KEY, or the file STOREKEEPER_SIGNING_KEY_FILE (default: storekeeper-signing.key beside the SQLite database), made with a new key the first time."
        )

        @OptionGroup var database: DatabaseOptions
        @Option(name: .customLong("key-file"), help: "The root key's file (env STOREKEEPER_SIGNING_KEY_FILE).")
        var keyFile: String?

        func run() async throws {
            let settings = try database.settings(extra: [CoreSettings.Key.signingKeyFile: keyFile]).core
            let root: [UInt8]
            do {
                root = Array(try SigningRootKey.load(settings).publicKey.rawRepresentation)
            } catch {
                throw ValidationError(error.description)
            }
            print(Data(root).base64EncodedString())
        }
    }
}
