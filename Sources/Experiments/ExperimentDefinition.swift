import Foundation

/// A split test of paywalls or prices, as its JSON definition describes it.
public struct ExperimentDefinition: Codable, Hashable, Sendable {
    public enum Status: String, Codable, Hashable, Sendable {
        case draft, running, paused, stopped, rolledBack
    }

    public struct Variant: Codable, Hashable, Sendable {
        public var key: String
        /// Relative weight; the weights are normalised to sum to 1.
        public var weight: Double?
        /// What the app shows for this variant, such as `{"paywall": "v2", "products": ["annual_trial"]}`.
        public var payload: JSONValue?
        /// The paywall the server serves for this variant (its id); the placement's default when absent.
        public var paywall: String?

        public init(key: String, weight: Double? = nil, payload: JSONValue? = nil, paywall: String? = nil) {
            self.key = key
            self.weight = weight
            self.payload = payload
            self.paywall = paywall
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case key, weight, payload, paywall }

        public init(from decoder: any Decoder) throws {
            try StrictKeys.refuseUnknown(decoder, CodingKeys.self, what: "a variant")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            key = try c.decode(String.self, forKey: .key)
            weight = try c.decodeIfPresent(Double.self, forKey: .weight)
            payload = try c.decodeIfPresent(JSONValue.self, forKey: .payload)
            paywall = try c.decodeIfPresent(String.self, forKey: .paywall)
        }
    }

    /// Who may enter. Every condition given must hold; an absent one is no condition.
    public struct Targeting: Codable, Hashable, Sendable {
        /// Storefront countries (Apple's ISO 3166-1 alpha-3, such as `USA`).
        public var storefronts: [String]?
        /// App versions, inclusive, compared component by component (`1.10` > `1.9`).
        public var minAppVersion: String?
        public var maxAppVersion: String?
        public var customerStates: [CustomerState]?
        /// Only customers first seen at or after the experiment started.
        public var newUsersOnly: Bool?

        public init() {}

        enum CodingKeys: String, CodingKey, CaseIterable {
            case storefronts, minAppVersion, maxAppVersion, customerStates, newUsersOnly
        }

        public init(from decoder: any Decoder) throws {
            try StrictKeys.refuseUnknown(decoder, CodingKeys.self, what: "targeting")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            storefronts = try c.decodeIfPresent([String].self, forKey: .storefronts)
            minAppVersion = try c.decodeIfPresent(String.self, forKey: .minAppVersion)
            maxAppVersion = try c.decodeIfPresent(String.self, forKey: .maxAppVersion)
            customerStates = try c.decodeIfPresent([CustomerState].self, forKey: .customerStates)
            newUsersOnly = try c.decodeIfPresent(Bool.self, forKey: .newUsersOnly)
        }
    }

    public enum CustomerState: String, Codable, Hashable, Sendable {
        case new, active, inactive
    }

    public var key: String
    /// Where the app shows the test (the server's placements); the command line ignores it.
    public var placement: String?
    /// Hashed with the user id; defaults to the key. A new seed re-randomises everyone on purpose.
    public var seed: String?
    /// A new phase re-randomises everyone on purpose (sticky assignments of older phases are ignored). 0 by default.
    public var phase: Int
    /// `draft` by default: nobody is assigned until the experiment is started.
    public var status: Status
    /// The variant everyone gets once the test is stopped.
    public var winner: String?
    public var variants: [Variant]
    /// The share of users who enter, from 0 to 1 (1 by default).
    public var coverage: Double
    public var targeting: Targeting?
    public var namespace: Namespace?
    /// When the experiment started (epoch ms), for `newUsersOnly`.
    public var startedAt: Int64?
    /// GrowthBook's hash version: 2 (the default) or 1.
    public var hashVersion: Int?

    /// The A/A diagnostic arm's key: reported next to the control, never a winner.
    public static let controlCheckKey = "control_check"

    public init(key: String, phase: Int = 1, status: Status = .running, variants: [Variant], coverage: Double = 1) {
        self.key = key
        self.phase = phase
        self.status = status
        self.variants = variants
        self.coverage = coverage
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case key, placement, seed, phase, status, winner, variants, coverage, targeting, namespace, startedAt, hashVersion
    }

    /// What the server keeps beside a definition and answers with it: read past, so that the server's own answer is a
    /// definition everywhere one is read (the CLI, the simulator, a POST of it again).
    public static let serverKeptKeys: Set<String> = ["createdAt", "updatedAt"]

    /// Only `key` and `variants` are required. An unknown field is refused when the decoder asks for it (see
    /// ``StrictKeys``), as ``decode(_:requireWeightsSumToOne:)`` does; the server-kept fields are read past.
    public init(from decoder: any Decoder) throws {
        try StrictKeys.refuseUnknown(decoder, CodingKeys.self, what: "an experiment definition", ignoring: Self.serverKeptKeys)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        key = try c.decode(String.self, forKey: .key)
        placement = try c.decodeIfPresent(String.self, forKey: .placement)
        seed = try c.decodeIfPresent(String.self, forKey: .seed)
        phase = Int(try c.decodeWholeIfPresent(.phase) ?? 0)
        status = try c.decodeIfPresent(Status.self, forKey: .status) ?? .draft
        winner = try c.decodeIfPresent(String.self, forKey: .winner)
        variants = try c.decode([Variant].self, forKey: .variants)
        coverage = try c.decodeIfPresent(Double.self, forKey: .coverage) ?? 1
        targeting = try c.decodeIfPresent(Targeting.self, forKey: .targeting)
        namespace = try c.decodeIfPresent(Namespace.self, forKey: .namespace)
        startedAt = try c.decodeWholeIfPresent(.startedAt)
        hashVersion = try c.decodeWholeIfPresent(.hashVersion).map { Int($0) }
    }

    /// Decodes and validates a definition someone wrote, with errors that name the field at fault in plain words; an
    /// unknown field is refused (plain `Decodable` decoding ignores it).
    public static func decode(_ data: Data, requireWeightsSumToOne: Bool = false) throws(ExperimentError) -> ExperimentDefinition {
        guard !JSONValue.nests(data, deeperThan: maxDefinitionDepth) else {
            throw .invalidDefinition("a definition nests arrays and objects at most \(maxDefinitionDepth) deep")
        }
        let definition: ExperimentDefinition
        do {
            let decoder = JSONDecoder()
            if let option = StrictKeys.option { decoder.userInfo[option] = true }
            definition = try decoder.decode(ExperimentDefinition.self, from: data)
        } catch {
            throw PlainDecodingError.experimentError(error)
        }
        try definition.validate(requireWeightsSumToOne: requireWeightsSumToOne)
        return definition
    }

    /// The variant served to people outside the test: the one named `control`, or the first.
    public var control: Variant? {
        variants.first { $0.key == "control" } ?? variants.first
    }

    public var effectiveSeed: String { seed ?? key }

    /// How deep a definition may nest (checked before it is decoded), and a variant's payload (checked after, naming
    /// the variant), and how large a payload may be once encoded: what the SDK is answered must decode on every
    /// device, and a payload is answered inside two more levels.
    public static let maxDefinitionDepth = 64
    public static let maxPayloadDepth = 32
    public static let maxPayloadBytes = 64 * 1024

    /// The longest experiment or variant key, in Unicode scalars.
    public static let maxKeyLength = 256

    /// An experiment or variant key has at most `maxKeyLength` scalars and no control character (NUL, line breaks,
    /// U+0085, U+2028, U+2029): keys reach logs, CSV exports and pages.
    static func checkKey(_ key: String, field: String) throws(ExperimentError) {
        guard key.unicodeScalars.count <= maxKeyLength else {
            throw .invalidField(field, "a key has at most \(maxKeyLength) characters")
        }
        if let bad = key.unicodeScalars.first(where: {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{2029}"
        }) {
            let hex = String(bad.value, radix: 16, uppercase: true)
            throw .invalidField(field, "a key holds no control character (U+\(String(repeating: "0", count: max(0, 4 - hex.count)) + hex))")
        }
    }

    /// Checks what the JSON cannot: keys, weights, coverage, the winner and the namespace. With
    /// `requireWeightsSumToOne` (the server), weights given must add up to 1 (±0.001) rather than be relative.
    public func validate(requireWeightsSumToOne: Bool = false) throws(ExperimentError) {
        guard !key.isEmpty else { throw .invalidField("key", "the experiment key is empty") }
        try Self.checkKey(key, field: "key")
        guard variants.count >= 2 else { throw .invalidField("variants", "an experiment needs at least two variants") }
        var seen: Set<String> = []
        for (index, variant) in variants.enumerated() {
            let field = "variants[\(index)]"
            guard !variant.key.isEmpty else { throw .invalidField("\(field).key", "a variant key is empty") }
            try Self.checkKey(variant.key, field: "\(field).key")
            guard seen.insert(variant.key).inserted else {
                throw .invalidField("\(field).key", "variant '\(variant.key)' appears twice")
            }
            if let payload = variant.payload {
                guard payload.depth <= Self.maxPayloadDepth else {
                    throw .invalidField(
                        "\(field).payload", "a payload nests arrays and objects at most \(Self.maxPayloadDepth) deep, not \(payload.depth)")
                }
                let size = (try? JSONEncoder().encode(payload).count) ?? Int.max
                guard size <= Self.maxPayloadBytes else {
                    throw .invalidField("\(field).payload", "a payload is at most \(Self.maxPayloadBytes / 1024) KB of JSON")
                }
            }
            if let weight = variant.weight, !(weight.isFinite && weight >= 0) {
                throw .invalidField(
                    "\(field).weight", "variant '\(variant.key)' has weight \(weight); weights are finite and not negative")
            }
        }
        if variants.contains(where: { $0.weight != nil }) {
            let sum = variants.reduce(0) { $0 + ($1.weight ?? 0) }
            guard sum > 0 else { throw .invalidField("variants", "the variant weights sum to 0") }
            if requireWeightsSumToOne {
                guard variants.allSatisfy({ $0.weight != nil }) else {
                    throw .invalidField("variants", "every variant has a weight, or none has (equal weights)")
                }
                guard abs(sum - 1) <= 0.001 else {
                    throw .invalidField("variants", "the variant weights add up to \(sum); they must add up to 1 (±0.001)")
                }
            }
        }
        guard coverage.isFinite, (0...1).contains(coverage) else {
            throw .invalidField("coverage", "coverage is \(coverage); it must be between 0 and 1")
        }
        guard phase >= 0 else { throw .invalidField("phase", "the phase is \(phase); phases count from 0") }
        if let winner {
            guard variants.contains(where: { $0.key == winner }) else {
                throw .invalidField("winner", "the winner '\(winner)' is not a variant")
            }
            guard winner != Self.controlCheckKey else {
                throw .invalidField("winner", "'\(Self.controlCheckKey)' is an A/A diagnostic arm and cannot win")
            }
        } else if status == .stopped {
            throw .invalidField("winner", "a stopped experiment names its winner")
        }
        if let namespace, !(0 <= namespace.start && namespace.start <= namespace.end && namespace.end <= 1) {
            throw .invalidField("namespace", "namespace '\(namespace.id)' has the range [\(namespace.start), \(namespace.end))")
        }
        if let version = hashVersion, version != 1, version != 2 {
            throw .invalidField("hashVersion", "hashVersion \(version) is not 1 or 2")
        }
    }

    /// The weights normalised to sum to 1 (equal when none are given).
    public var normalisedWeights: [Double] {
        guard variants.contains(where: { $0.weight != nil }) else { return GrowthBookHashing.equalWeights(variants.count) }
        let weights = variants.map { $0.weight ?? 0 }
        let sum = weights.reduce(0, +)
        return sum > 0 ? weights.map { $0 / sum } : GrowthBookHashing.equalWeights(variants.count)
    }
}

public enum ExperimentError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalidDefinition(String)
    /// A definition's field (`variants[1].weight`) is at fault.
    case invalidField(String, String)
    case invalidData(line: Int, String)

    /// The field at fault, when one is.
    public var field: String? {
        if case .invalidField(let field, _) = self { return field }
        return nil
    }

    /// The message without the field's name.
    public var message: String {
        switch self {
        case .invalidDefinition(let message), .invalidField(_, let message), .invalidData(_, let message): message
        }
    }

    public var description: String {
        switch self {
        case .invalidDefinition(let message): "invalid experiment definition: \(message)"
        case .invalidField(let field, let message): "invalid experiment definition: \(field): \(message)"
        case .invalidData(let line, let message): "line \(line): \(message)"
        }
    }
}
