import ArgumentParser
import Experiments
import Foundation

struct ExperimentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "experiment",
        abstract: "Deterministic split tests of paywalls and prices.",
        subcommands: [AssignCommand.self, AnalyzeCommand.self, SizeCommand.self]
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
            experiment = try ExperimentDefinition.decode(data)
            userAttributes = try attributes.map { try JSONDecoder().decode(UserAttributes.self, from: Data($0.utf8)) } ?? UserAttributes()
        } catch let error as ExperimentError {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(1)
        } catch {
            let plain = PlainDecodingError.experimentError(error)
            FileHandle.standardError.write(Data("invalid --attributes: \(plain.field.map { "\($0) " } ?? "")\(plain.message)\n".utf8))
            throw ExitCode(1)
        }
        let assignment = Assigner.assign(experiment, userId: user, attributes: userAttributes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try encoder.encode(
            Output(variant: assignment.variant, inExperiment: assignment.inExperiment, hashValue: assignment.hashValue))
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }
}

struct SizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "size",
        abstract: "Users per arm to detect a relative change in a conversion rate (two-sided two-proportion test).",
        discussion: "Example: --baseline 0.02 --mde 0.5 (2% → 3%) needs 3,826 users per arm at α = 0.05 and 80% power."
    )

    @Option(parsing: .unconditional, help: "The control's conversion rate, between 0 and 1.")
    var baseline: Double

    @Option(parsing: .unconditional, help: "The smallest relative change worth detecting (0.5 is +50%, -0.2 is −20%).")
    var mde: Double

    @Option(parsing: .unconditional, help: "The false-positive rate.")
    var alpha: Double = 0.05

    @Option(parsing: .unconditional, help: "The chance of detecting a true change of that size.")
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

struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Each variant against the control: trial, paid, revenue (and trial → paid, ARPPU, refund rate).",
        discussion: """
            --data is a CSV with one row per exposed user and the header user_id,variant,exposed_at,trial,paid,revenue \
            (exposed_at in epoch ms, trial and paid 0 or 1, revenue in USD; a payer with revenue ≤ 0 was refunded). \
            Prints a table, or JSON with --json: {"srm": {"pValue", "alarm"}, "variants": [{"key", "users", "metrics": \
            {"trial"|"paid"|"revenue"|…: {"value", "lift", "ci", "pValue", "pValueAdjusted", "sequentialCi", \
            "chanceToBeatControl", "expectedLoss"}}}]}. Bad data exits 1 with the line number.
            """
    )

    @Option(help: ArgumentHelp("The experiment definition (JSON).", valueName: "exp.json"))
    var definition: String

    @Option(help: ArgumentHelp("The exposed users (CSV).", valueName: "users.csv"))
    var data: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Option(parsing: .unconditional, help: "The false-positive rate for intervals and p-values.")
    var alpha: Double = 0.05

    @Option(parsing: .unconditional, help: "Trial length in days: trial → paid counts trials at least this old.")
    var trialDays: Int = 7

    func run() throws {
        guard let definitionData = FileManager.default.contents(atPath: definition) else {
            throw UsageError(message: "cannot read the definition '\(definition)'")
        }
        guard let csv = FileManager.default.contents(atPath: data) else {
            throw UsageError(message: "cannot read the data '\(data)'")
        }
        guard alpha > 0, alpha < 1, trialDays >= 0 else { throw UsageError(message: "--alpha must be in (0, 1) and --trial-days ≥ 0") }
        let result: AnalysisResult
        do {
            let experiment = try ExperimentDefinition.decode(definitionData)
            let users = try ExposureCSV.parse(String(decoding: csv, as: UTF8.self), experiment: experiment)
            var options = Analysis.Options()
            options.alpha = alpha
            options.trialWindowMilliseconds = Int64(trialDays) * 86_400_000
            result = Analysis.analyze(users, experiment: experiment, options: options)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(1)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(result) + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data(Self.table(result).utf8))
        }
    }

    static func table(_ result: AnalysisResult) -> String {
        func percent(_ value: Double?) -> String { value.map { String(format: "%+.1f%%", $0 * 100) } ?? "" }
        func number(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "" }
        var lines = [
            String(
                format: "SRM: p = %.4g%@", result.srm.pValue, result.srm.alarm ? "  ALARM: exposure counts do not match the weights" : "")
        ]
        lines.append(
            "variant              users  metric       value      lift      95% CI                 p        p(Holm)  seq. CI                P(beat)"
        )
        for variant in result.variants {
            for name in ["trial", "paid", "trialToPaid", "revenue", "arppu", "refundRate"] {
                guard let metric = variant.metrics[name] else { continue }
                let key = variant.key + (variant.isControlCheck ? " (A/A)" : "")
                let ci = metric.ci.map { "[\(percent($0[0])), \(percent($0[1]))]" } ?? ""
                let sequential = metric.sequentialCi.map { "[\(percent($0[0])), \(percent($0[1]))]" } ?? ""
                let value =
                    metric.count == 0
                    ? "n/a"
                    : name == "revenue" || name == "arppu"
                        ? String(format: "$%.2f", metric.value) : String(format: "%.2f%%", metric.value * 100)
                lines.append(
                    [
                        key.padding(toLength: 20, withPad: " ", startingAt: 0), String(variant.users).leftPad(6), " ",
                        name.padding(toLength: 11, withPad: " ", startingAt: 0), value.leftPad(9),
                        (metric.liftUndefinedReason == nil ? percent(metric.lift) : "n/a").leftPad(9), " ",
                        ci.padding(toLength: 22, withPad: " ", startingAt: 0), number(metric.pValue, "%.4f").leftPad(7), " ",
                        number(metric.pValueAdjusted, "%.4f").leftPad(8), " ",
                        sequential.padding(toLength: 22, withPad: " ", startingAt: 0),
                        number(metric.chanceToBeatControl.map { $0 * 100 }, "%.1f%%").leftPad(7),
                    ].joined())
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
