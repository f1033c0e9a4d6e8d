import AppStore
import ArgumentParser
import Foundation
import StorekeeperCore
import StorekeeperServer

/// `storekeeper retention`: Apple's Retention Messaging API for an app (its images, messages, default messages, the
/// real-time URL and performance tests), called with the app's Server API key, and the app's retention policy.
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Messages on the subscription's cancellation screen: Apple's Retention Messaging API and the app's policy.",
        subcommands: [Images.self, Messages.self, Default.self, RealtimeURL.self, PerformanceTest.self, Policy.self])

    /// The app, the database, and the environment whose Apple host is called.
    struct Target: ParsableArguments {
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The app's id (app_…).") var appId: String
        @Option(help: "Production or Sandbox: which of Apple's hosts (the app's first environment by default).")
        var environment: String?

        /// Runs `body` with the app's App Store Server API client; Apple's refusals exit 1 with Apple's error name.
        func call<T>(_ body: (AppStoreServerAPIClient) async throws -> T) async throws -> T {
            do {
                return try await database.withCore { core in
                    let app = try await core.apps.app(id: appId)
                    return try await body(try await core.retention.appleClient(app: app, environment: try app.environment(environment)))
                }
            } catch let error as AppStoreServerAPIError {
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    static func uuid(_ text: String, _ option: String) throws -> UUID {
        guard let uuid = UUID(uuidString: text) else { throw UsageError(message: "\(option) is a UUID, not '\(text)'") }
        return uuid
    }

    struct Done: Encodable { var done: String }

    struct Images: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Images for messages (PNG).", subcommands: [List.self, Upload.self, Delete.self])

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Every uploaded image and its review state.")
            @OptionGroup var target: Target
            func run() async throws { try printJSON(try await target.call { try await $0.retentionImages() }) }
        }

        struct Upload: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Upload a PNG; prints its identifier.")
            @OptionGroup var target: Target
            @Argument(help: "The PNG file.") var file: String
            @Option(help: "The image's identifier (a new UUID by default).") var id: String?
            @Option(help: "FULL_SIZE (default) or BULLET_POINT.") var size: String?

            func run() async throws {
                guard let data = FileManager.default.contents(atPath: file) else { throw UsageError(message: "cannot read \(file)") }
                let identifier = try id.map { try RetentionCommand.uuid($0, "--id") } ?? UUID()
                try await target.call {
                    try await $0.uploadRetentionImage(identifier: identifier, png: Array(data), size: size.map(ImageSize.init(rawValue:)))
                }
                try printJSON(["imageIdentifier": identifier.uuidString.lowercased()])
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete an image no message uses.")
            @OptionGroup var target: Target
            @Argument(help: "The image's identifier.") var id: String
            func run() async throws {
                let identifier = try RetentionCommand.uuid(id, "the image's identifier")
                try await target.call { try await $0.deleteRetentionImage(identifier: identifier) }
                try printJSON(Done(done: "deleted image \(identifier.uuidString.lowercased())"))
            }
        }
    }

    struct Messages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Messages (header ≤ 66 characters, body ≤ 144).", subcommands: [List.self, Upload.self, Delete.self])

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Every uploaded message and its review state.")
            @OptionGroup var target: Target
            func run() async throws { try printJSON(try await target.call { try await $0.retentionMessages() }) }
        }

        struct Upload: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Upload a message for Apple's review; prints its identifier. Over Apple's limits, it is refused before the call.")
            @OptionGroup var target: Target
            @Option(help: "At most 66 characters.") var header: String
            @Option(help: "At most 144 characters.") var body: String
            @Option(help: "The identifier of an uploaded FULL_SIZE image.") var image: String?
            @Option(help: "The image's alternative text (at most 150 characters).") var altText: String?
            @Option(help: "ABOVE_BODY or ABOVE_IMAGE.") var headerPosition: String?
            @Option(help: "A bullet point as text|imageIdentifier|altText (up to five).") var bullet: [String] = []
            @Option(help: "The message's identifier (a new UUID by default).") var id: String?

            func run() async throws {
                var message = UploadMessageRequestBody(
                    header: header, body: body, headerPosition: headerPosition.map(HeaderPosition.init(rawValue:)))
                if let image { message.image = .init(imageIdentifier: image, altText: altText ?? "") }
                if !bullet.isEmpty {
                    message.bulletPoints = try bullet.map { text in
                        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                        guard parts.count == 3 else { throw UsageError(message: "--bullet is text|imageIdentifier|altText, not '\(text)'") }
                        return .init(text: parts[0], imageIdentifier: parts[1], altText: parts[2])
                    }
                }
                do {
                    try message.validate()
                } catch {
                    throw UsageError(message: error.description)
                }
                let identifier = try id.map { try RetentionCommand.uuid($0, "--id") } ?? UUID()
                try await target.call { try await $0.uploadRetentionMessage(identifier: identifier, message) }
                try printJSON(["messageIdentifier": identifier.uuidString.lowercased()])
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Delete a message.")
            @OptionGroup var target: Target
            @Argument(help: "The message's identifier.") var id: String
            func run() async throws {
                let identifier = try RetentionCommand.uuid(id, "the message's identifier")
                try await target.call { try await $0.deleteRetentionMessage(identifier: identifier) }
                try printJSON(Done(done: "deleted message \(identifier.uuidString.lowercased())"))
            }
        }
    }

    struct Default: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The default message of a product in a locale: what Apple shows when the real-time answer is none or late.",
            subcommands: [Show.self, Set.self, Delete.self])

        struct Place: ParsableArguments {
            @Option(help: "The subscription's product id.") var product: String
            @Option(help: "The locale (en-US).") var locale: String
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "The message configured.")
            @OptionGroup var target: Target
            @OptionGroup var place: Place
            func run() async throws {
                let id = try await target.call { try await $0.defaultRetentionMessage(productId: place.product, locale: place.locale) }
                try printJSON(["messageIdentifier": id])
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "set", abstract: "Configure an approved message.")
            @OptionGroup var target: Target
            @OptionGroup var place: Place
            @Option(help: "The message's identifier.") var message: String
            func run() async throws {
                let id = try RetentionCommand.uuid(message, "--message")
                try await target.call {
                    try await $0.configureDefaultRetentionMessage(productId: place.product, locale: place.locale, messageIdentifier: id)
                }
                try printJSON(Done(done: "default message of \(place.product) in \(place.locale): \(id.uuidString.lowercased())"))
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove the default message.")
            @OptionGroup var target: Target
            @OptionGroup var place: Place
            func run() async throws {
                try await target.call { try await $0.deleteDefaultRetentionMessage(productId: place.product, locale: place.locale) }
                try printJSON(Done(done: "no default message of \(place.product) in \(place.locale)"))
            }
        }
    }

    struct RealtimeURL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "realtime-url",
            abstract: "Where Apple asks for a message: this server's https://…/v1/apps/{appId}/retention/appstore.",
            subcommands: [Show.self, Set.self, Delete.self])

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "The URL configured.")
            @OptionGroup var target: Target
            func run() async throws { try printJSON(["realtimeURL": try await target.call { try await $0.realtimeURL() }]) }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "set", abstract: "Configure the URL.")
            @OptionGroup var target: Target
            @Argument(help: "The URL (at most 256 characters).") var url: String
            func run() async throws {
                try await target.call { try await $0.configureRealtimeURL(url) }
                try printJSON(["realtimeURL": url])
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove the URL: Apple shows default messages only.")
            @OptionGroup var target: Target
            func run() async throws {
                try await target.call { try await $0.deleteRealtimeURL() }
                try printJSON(Done(done: "no real-time URL"))
            }
        }
    }

    struct PerformanceTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "performance-test", abstract: "Apple's test of the real-time URL, which Apple requires before it calls it.",
            subcommands: [Start.self, Result.self])

        struct Start: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Start a test about one subscription; prints its requestId.")
            @OptionGroup var target: Target
            @Option(help: "The original transaction id of a subscription Apple knows.") var originalTransactionId: String
            func run() async throws {
                try printJSON(
                    try await target.call { try await $0.startRetentionPerformanceTest(originalTransactionId: originalTransactionId) })
            }
        }

        struct Result: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "A test's result: PENDING, PASS or FAIL, with response times in ms.")
            @OptionGroup var target: Target
            @Argument(help: "The test's requestId.") var requestId: String
            func run() async throws {
                try printJSON(try await target.call { try await $0.retentionPerformanceTestResult(requestId: requestId) })
            }
        }
    }

    struct Policy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The app's retention policy (what PUT /v1/apps/{appId}/retention-policy sets).",
            subcommands: [Show.self, Set.self, Delete.self])

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "The policy as JSON.")
            @OptionGroup var database: DatabaseOptions
            @Argument(help: "The app's id (app_…).") var appId: String
            func run() async throws {
                let policy = try await database.withCore { core in core.retention.policy(of: try await core.apps.app(id: appId)) }
                guard let policy else { throw UsageError(message: "the app has no retention policy") }
                try printJSON(policy)
            }
        }

        struct Set: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "set", abstract: "Set the policy from a JSON file.")
            @OptionGroup var database: DatabaseOptions
            @Argument(help: "The app's id (app_…).") var appId: String
            @Argument(help: "The policy, JSON (see the README's Retention messages).") var file: String
            func run() async throws {
                guard let data = FileManager.default.contents(atPath: file) else { throw UsageError(message: "cannot read \(file)") }
                let policy: RetentionPolicy
                do {
                    policy = try JSONDecoder().decode(RetentionPolicyBody.self, from: data).policy
                } catch let error as CoreError {
                    throw UsageError(message: "\(file): \(error.description)")
                } catch {
                    throw UsageError(message: "\(file) is not a retention policy: \(error)")
                }
                try await database.withCore { core in try await core.retention.setPolicy(policy, of: try await core.apps.app(id: appId)) }
                try printJSON(policy)
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove the policy.")
            @OptionGroup var database: DatabaseOptions
            @Argument(help: "The app's id (app_…).") var appId: String
            func run() async throws {
                try await database.withCore { core in try await core.retention.setPolicy(nil, of: try await core.apps.app(id: appId)) }
                try printJSON(Done(done: "no retention policy"))
            }
        }
    }
}
