/// What is known about a user when they are assigned.
public struct UserAttributes: Codable, Hashable, Sendable {
    public var storefront: String?
    public var appVersion: String?
    public var customerState: ExperimentDefinition.CustomerState?
    /// When the user was first seen (epoch ms), for `newUsersOnly`.
    public var firstSeenAt: Int64?

    public init(
        storefront: String? = nil, appVersion: String? = nil, customerState: ExperimentDefinition.CustomerState? = nil,
        firstSeenAt: Int64? = nil
    ) {
        self.storefront = storefront
        self.appVersion = appVersion
        self.customerState = customerState
        self.firstSeenAt = firstSeenAt
    }
}

/// A user's first assignment, stored so that it wins over any later hashing until a new phase or seed.
public struct StickyAssignment: Codable, Hashable, Sendable {
    public var experimentKey: String
    public var phase: Int
    public var seed: String
    public var variant: String

    public init(experimentKey: String, phase: Int, seed: String, variant: String) {
        self.experimentKey = experimentKey
        self.phase = phase
        self.seed = seed
        self.variant = variant
    }
}

/// The variant a user gets, and why.
public struct Assignment: Codable, Hashable, Sendable {
    public enum Reason: String, Codable, Hashable, Sendable {
        /// Hashed into a variant now.
        case assigned
        /// A stored assignment of this phase and seed.
        case sticky
        /// Draft, paused or rolled back: the control for everyone.
        case notRunning
        /// Stopped: the winner for everyone.
        case stopped
        case noUserId
        case notTargeted
        case outsideNamespace
        case outsideCoverage
    }

    public var variant: String
    public var inExperiment: Bool
    /// The user's hash in [0, 1), when it was computed.
    public var hashValue: Double?
    public var payload: JSONValue?
    public var reason: Reason
    /// For a new assignment: what to store so that it sticks.
    public var newStickyAssignment: StickyAssignment?
}

public enum Assigner {
    /// Assigns `userId` to a variant of `experiment`. Deterministic: the same inputs give the same answer on every
    /// device and server. A paused, stopped or rolled-back experiment answers for everyone at once, before any
    /// stored assignment is looked at: that is the kill switch. To assign many users, prepare the experiment once
    /// with ``PreparedExperiment``.
    public static func assign(
        _ experiment: ExperimentDefinition, userId: String, attributes: UserAttributes = .init(), stored: StickyAssignment? = nil
    ) -> Assignment {
        PreparedExperiment(experiment).assign(userId: userId, attributes: attributes, stored: stored)
    }

    static func isTargeted(_ experiment: ExperimentDefinition, _ attributes: UserAttributes) -> Bool {
        guard let targeting = experiment.targeting else { return true }
        if let storefronts = targeting.storefronts {
            guard let storefront = attributes.storefront, storefronts.contains(where: { $0.uppercased() == storefront.uppercased() }) else {
                return false
            }
        }
        if targeting.minAppVersion != nil || targeting.maxAppVersion != nil {
            guard let version = attributes.appVersion else { return false }
            if let minimum = targeting.minAppVersion, compareVersions(version, minimum) < 0 { return false }
            if let maximum = targeting.maxAppVersion, compareVersions(version, maximum) > 0 { return false }
        }
        if let states = targeting.customerStates {
            guard let state = attributes.customerState, states.contains(state) else { return false }
        }
        if targeting.newUsersOnly == true {
            guard let firstSeen = attributes.firstSeenAt, let started = experiment.startedAt, firstSeen >= started else { return false }
        }
        return true
    }

    /// Compares dotted versions component by component, numerically where both are numbers (`1.10` > `1.9`,
    /// `2.0` == `2`). Returns -1, 0 or 1.
    public static func compareVersions(_ a: String, _ b: String) -> Int {
        let left = a.split(separator: ".").map(String.init)
        let right = b.split(separator: ".").map(String.init)
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : "0"
            let r = index < right.count ? right[index] : "0"
            if let ln = Int(l), let rn = Int(r) {
                if ln != rn { return ln < rn ? -1 : 1 }
            } else if l != r {
                return l < r ? -1 : 1
            }
        }
        return 0
    }
}

/// One record per (experiment, customer), at the first exposure: analysis counts exposed users only, from then on.
public struct Exposure: Codable, Hashable, Sendable {
    public var experimentKey: String
    public var phase: Int
    public var customerId: String
    public var variant: String
    /// Epoch ms of the first time the customer actually saw the test.
    public var exposedAt: Int64
    /// Where it happened: the screen, the app version, the storefront …
    public var context: [String: String]

    public init(experimentKey: String, phase: Int, customerId: String, variant: String, exposedAt: Int64, context: [String: String] = [:]) {
        self.experimentKey = experimentKey
        self.phase = phase
        self.customerId = customerId
        self.variant = variant
        self.exposedAt = exposedAt
        self.context = context
    }
}

/// Exposures kept once each: a later exposure of the same customer to the same experiment changes nothing.
public struct ExposureLedger: Hashable, Sendable {
    private struct Key: Hashable, Sendable {
        var experimentKey: String
        var customerId: String
    }

    private var exposures: [Key: Exposure] = [:]

    public init() {}

    /// Records `exposure` if it is the customer's first for this experiment; returns whether it was.
    /// Out-of-order deliveries keep the earliest exposure.
    @discardableResult
    public mutating func record(_ exposure: Exposure) -> Bool {
        let key = Key(experimentKey: exposure.experimentKey, customerId: exposure.customerId)
        if let existing = exposures[key] {
            if exposure.exposedAt < existing.exposedAt { exposures[key] = exposure }
            return false
        }
        exposures[key] = exposure
        return true
    }

    public func exposure(experimentKey: String, customerId: String) -> Exposure? {
        exposures[Key(experimentKey: experimentKey, customerId: customerId)]
    }

    public var count: Int { exposures.count }
}

/// An experiment with what every assignment needs worked out once: its seed, control, bucket ranges and hash version.
public struct PreparedExperiment: Sendable {
    public let definition: ExperimentDefinition
    let seed: String
    let control: ExperimentDefinition.Variant?
    let ranges: [ClosedRange<Double>]
    let hashVersion: Int
    /// FNV-1a's state after the seed: version 2 hashes seed + user id, so the seed's part is the same for everyone.
    let seedState: UInt32

    public init(_ definition: ExperimentDefinition) {
        self.definition = definition
        seed = definition.effectiveSeed
        control = definition.control
        ranges = GrowthBookHashing.bucketRanges(
            count: definition.variants.count, coverage: definition.coverage, weights: definition.normalisedWeights)
        hashVersion = definition.hashVersion ?? 2
        seedState = GrowthBookHashing.fnv1a32(seed)
    }

    /// See ``Assigner/assign(_:userId:attributes:stored:)``.
    public func assign(userId: String, attributes: UserAttributes = .init(), stored: StickyAssignment? = nil) -> Assignment {
        func outside(_ reason: Assignment.Reason, variant: ExperimentDefinition.Variant? = control, hash: Double? = nil) -> Assignment {
            Assignment(variant: variant?.key ?? "", inExperiment: false, hashValue: hash, payload: variant?.payload, reason: reason)
        }

        switch definition.status {
        case .draft, .paused, .rolledBack:
            return outside(.notRunning)
        case .stopped:
            return outside(.stopped, variant: definition.variants.first { $0.key == definition.winner } ?? control)
        case .running:
            break
        }
        guard !userId.isEmpty else { return outside(.noUserId) }

        if let stored, stored.experimentKey == definition.key, stored.phase == definition.phase, stored.seed == seed,
            let variant = definition.variants.first(where: { $0.key == stored.variant })
        {
            return Assignment(variant: variant.key, inExperiment: true, hashValue: nil, payload: variant.payload, reason: .sticky)
        }
        guard Assigner.isTargeted(definition, attributes) else { return outside(.notTargeted) }
        if let namespace = definition.namespace, !GrowthBookHashing.inNamespace(userId: userId, namespace: namespace) {
            return outside(.outsideNamespace)
        }
        let hash: Double
        if hashVersion == 2 {
            hash = GrowthBookHashing.hashV2(seedState: seedState, value: userId)
        } else if let legacy = GrowthBookHashing.hash(seed: seed, value: userId, version: hashVersion) {
            hash = legacy
        } else {
            return outside(.outsideCoverage)
        }
        guard let index = GrowthBookHashing.chooseVariation(hash, ranges: ranges) else {
            return outside(.outsideCoverage, hash: hash)
        }
        let variant = definition.variants[index]
        return Assignment(
            variant: variant.key, inExperiment: true, hashValue: hash, payload: variant.payload, reason: .assigned,
            newStickyAssignment: StickyAssignment(experimentKey: definition.key, phase: definition.phase, seed: seed, variant: variant.key))
    }
}
