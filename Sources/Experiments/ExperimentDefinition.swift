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

        public init(key: String, weight: Double? = nil, payload: JSONValue? = nil) {
            self.key = key
            self.weight = weight
            self.payload = payload
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
    }

    public enum CustomerState: String, Codable, Hashable, Sendable {
        case new, active, inactive
    }

    public var key: String
    /// Hashed with the user id; defaults to the key. A new seed re-randomises everyone on purpose.
    public var seed: String?
    /// A new phase re-randomises everyone on purpose (sticky assignments of older phases are ignored).
    public var phase: Int
    public var status: Status
    /// The variant everyone gets once the test is stopped.
    public var winner: String?
    public var variants: [Variant]
    /// The share of users who enter, from 0 to 1.
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

    /// The variant served to people outside the test: the one named `control`, or the first.
    public var control: Variant? {
        variants.first { $0.key == "control" } ?? variants.first
    }

    public var effectiveSeed: String { seed ?? key }

    /// Checks what the JSON cannot: keys, weights, coverage, the winner and the namespace.
    public func validate() throws(ExperimentError) {
        guard !key.isEmpty else { throw .invalidDefinition("the experiment key is empty") }
        guard variants.count >= 2 else { throw .invalidDefinition("an experiment needs at least two variants") }
        var seen: Set<String> = []
        for variant in variants {
            guard !variant.key.isEmpty else { throw .invalidDefinition("a variant key is empty") }
            guard seen.insert(variant.key).inserted else { throw .invalidDefinition("variant '\(variant.key)' appears twice") }
            if let weight = variant.weight, !(weight.isFinite && weight >= 0) {
                throw .invalidDefinition("variant '\(variant.key)' has weight \(weight); weights are finite and not negative")
            }
        }
        if variants.contains(where: { $0.weight != nil }) {
            let sum = variants.reduce(0) { $0 + ($1.weight ?? 0) }
            guard sum > 0 else { throw .invalidDefinition("the variant weights sum to 0") }
        }
        guard coverage.isFinite, (0...1).contains(coverage) else {
            throw .invalidDefinition("coverage is \(coverage); it must be between 0 and 1")
        }
        if status == .stopped {
            guard let winner else { throw .invalidDefinition("a stopped experiment names its winner") }
            guard variants.contains(where: { $0.key == winner }) else {
                throw .invalidDefinition("the winner '\(winner)' is not a variant")
            }
            guard winner != Self.controlCheckKey else {
                throw .invalidDefinition("'\(Self.controlCheckKey)' is an A/A diagnostic arm and cannot win")
            }
        }
        if let namespace, !(0 <= namespace.start && namespace.start <= namespace.end && namespace.end <= 1) {
            throw .invalidDefinition("namespace '\(namespace.id)' has the range [\(namespace.start), \(namespace.end))")
        }
        if let version = hashVersion, version != 1, version != 2 {
            throw .invalidDefinition("hashVersion \(version) is not 1 or 2")
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
    case invalidData(line: Int, String)

    public var description: String {
        switch self {
        case .invalidDefinition(let message): "invalid experiment definition: \(message)"
        case .invalidData(let line, let message): "line \(line): \(message)"
        }
    }
}
