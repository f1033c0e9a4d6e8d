import Experiments
import Foundation
import Storage

/// A paywall as the app renders it: `{"id", "products", "config"}`.
public struct Paywall: Sendable, Codable, Hashable {
    public var id: String
    public var products: [String]
    public var config: JSONValue

    init(_ record: PaywallRecord) throws(CoreError) {
        id = record.id
        do {
            products = try JSONDecoder().decode([String].self, from: Data(record.products.utf8))
            config = try JSONDecoder().decode(JSONValue.self, from: Data(record.config.utf8))
        } catch {
            throw .internalError("paywall \(record.id) is stored as JSON that does not decode")
        }
    }
}

/// A place in the app that shows a paywall.
public struct PlacementView: Sendable, Codable, Hashable {
    public var id: String
    public var defaultPaywall: String
    public var createdAt: Int64
    public var updatedAt: Int64

    init(_ record: PlacementRecord) {
        id = record.id
        defaultPaywall = record.defaultPaywall
        createdAt = record.createdAt
        updatedAt = record.updatedAt
    }
}

/// An experiment as the API shows it: its definition's fields, and when it was created and last changed.
public struct ExperimentView: Sendable, Encodable, Hashable {
    public var definition: ExperimentDefinition
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey { case createdAt, updatedAt }

    public func encode(to encoder: any Encoder) throws {
        try definition.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}

/// What `GET /v1/customers/{appUserId}/placements/{placementId}` answers, with its JSON made once per catalog load
/// (`json`: the route's hot path sends it as it is).
public struct PlacementAnswer: Sendable, Encodable, Hashable {
    public struct ExperimentPart: Sendable, Codable, Hashable {
        public var key: String
        public var variant: String
        public var phase: Int
    }

    public var placement: String
    public var paywall: Paywall
    /// Set only while the customer is in a running experiment (then the app records its exposure).
    public var experiment: ExperimentPart?
    /// This answer as JSON.
    public var json = Data()

    init(placement: String, paywall: Paywall, experiment: ExperimentPart?) {
        self.placement = placement
        self.paywall = paywall
        self.experiment = experiment
    }

    enum CodingKeys: String, CodingKey { case placement, paywall, experiment }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(placement, forKey: .placement)
        try c.encode(paywall, forKey: .paywall)
        try c.encode(experiment, forKey: .experiment)
    }

    /// What identifies an answer without its paywall's content.
    struct Key: Hashable, Sendable {
        var placement: String
        var paywall: String
        var experiment: ExperimentPart?
    }

    var key: Key { Key(placement: placement, paywall: paywall.id, experiment: experiment) }
}

/// What the app posts when it shows an experiment's paywall.
public struct ExposureInput: Sendable, Codable, Hashable {
    public var experiment: String
    public var variant: String
    public var phase: Int
    public var placement: String
}

/// The customer's first exposure, and whether this request recorded it.
public struct ExposureAnswer: Sendable, Codable, Hashable {
    public var recorded: Bool
    public var experiment: String
    public var variant: String
    public var phase: Int
    public var placement: String
    public var exposedAt: Int64
}

/// What an SDK needs to assign offline: each placement's default paywall and the experiments that are not drafts,
/// without their paywalls' contents.
public struct ExperimentDefinitions: Sendable, Codable, Hashable {
    public struct PlacementEntry: Sendable, Codable, Hashable {
        public var id: String
        public var defaultPaywall: String
    }

    public var placements: [PlacementEntry]
    public var experiments: [ExperimentDefinition]
}

/// Ids of paywalls and placements, and experiment keys: 1 to 64 letters, digits, `.`, `_` or `-`, starting with a
/// letter or digit (they appear in paths).
enum ExperimentIds {
    static func validate(_ id: String, field: String) throws(CoreError) {
        let allowed = id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E
                || byte == 0x5F || byte == 0x2D
        }
        guard (1...64).contains(id.utf8.count), allowed, let first = id.utf8.first, first != 0x2E, first != 0x5F, first != 0x2D else {
            throw .invalidInput(
                field: field, "'\(id)' is not a valid id: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        }
    }
}
