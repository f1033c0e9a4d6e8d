import ArgumentParser
import Experiments
import Foundation

struct ExperimentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "experiment",
        abstract: "Deterministic split tests of paywalls and prices.",
        subcommands: [AssignCommand.self, SizeCommand.self]
    )
}

struct AssignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assign",
        abstract: "Print the variant a user gets: {\"variant\", \"inExperiment\", \"hashValue\"}.",
        discussion: """
            The assignment is GrowthBook's cross-SDK bucketing, so it is the same on every device and server. \
            --attributes is a JSON object with any of storefront, appVersion, customerState (new, active, inactive) \
            and firstSeenAt (epoch ms), for the definition's targeting. An invalid definition or attributes exit 1.
            """
    )

    @Option(help: ArgumentHelp("The experiment definition (JSON).", valueName: "exp.json"))
    var definition: String

    @Option(help: ArgumentHelp("The user's id.", valueName: "id"))
    var user: String

    @Option(help: ArgumentHelp("The user's attributes, as a JSON object.", valueName: "json"))
    var attributes: String?

    struct Output: Encodable {
        var variant: String
        var inExperiment: Bool
        var hashValue: Double?

        enum CodingKeys: String, CodingKey { case variant, inExperiment, hashValue }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(variant, forKey: .variant)
            try container.encode(inExperiment, forKey: .inExperiment)
            try container.encode(hashValue, forKey: .hashValue)
        }
    }

    func run() throws {
        guard let data = FileManager.default.contents(atPath: definition) else {
            throw UsageError(message: "cannot read the definition '\(definition)'")
        }
        let experiment: ExperimentDefinition
        let userAttributes: UserAttributes
        do {
            experiment = try JSONDecoder().decode(ExperimentDefinition.self, from: data)
            try experiment.validate()
            userAttributes = try attributes.map { try JSONDecoder().decode(UserAttributes.self, from: Data($0.utf8)) } ?? UserAttributes()
        } catch let error as ExperimentError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(1)
        } catch {
            FileHandle.standardError.write(Data("invalid JSON: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let assignment = Assigner.assign(experiment, userId: user, attributes: userAttributes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(Output(variant: assignment.variant, inExperiment: assignment.inExperiment, hashValue: assignment.hashValue))
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }
}

struct SizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "size",
        abstract: "Users per arm to detect a relative change in a conversion rate (two-sided two-proportion test).",
        discussion: "Example: --baseline 0.02 --mde 0.5 (2% → 3%) needs 3,826 users per arm at α = 0.05 and 80% power."
    )

    @Option(help: "The control's conversion rate, between 0 and 1.")
    var baseline: Double

    @Option(help: "The smallest relative change worth detecting (0.5 is +50%).")
    var mde: Double

    @Option(help: "The false-positive rate.")
    var alpha: Double = 0.05

    @Option(help: "The chance of detecting a true change of that size.")
    var power: Double = 0.8

    struct Output: Encodable {
        var usersPerArm: Int
        var baseline: Double
        var treatment: Double
        var alpha: Double
        var power: Double
    }

    func run() throws {
        guard let users = HypothesisTests.sampleSizePerArm(baseline: baseline, relativeMDE: mde, alpha: alpha, power: power) else {
            throw UsageError(message: "baseline and baseline × (1 + mde) must lie strictly between 0 and 1 and differ; alpha and power too")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let output = Output(usersPerArm: users, baseline: baseline, treatment: baseline * (1 + mde), alpha: alpha, power: power)
        FileHandle.standardOutput.write(try encoder.encode(output) + Data("\n".utf8))
    }
}
