import Experiments
import Foundation

/// What to show at a placement: its paywall, and the split test that chose it when there is one.
public struct Placement: Sendable, Codable, Hashable {
    public struct Paywall: Sendable, Codable, Hashable {
        public var id: String
        /// The products to offer, in order.
        public var products: [String]
        /// The paywall's own configuration (copy, colours …), as the team wrote it.
        public var config: JSONValue
    }

    /// The experiment that chose the paywall: present while the customer is in a running experiment.
    public struct Experiment: Sendable, Codable, Hashable {
        public var key: String
        public var variant: String
        public var phase: Int
    }

    public var placement: String
    public var paywall: Paywall
    public var experiment: Experiment?
}

/// The placements and experiments (not drafts) of the app, as `GET /v1/apps/{appId}/experiments/definitions` answers:
/// what the SDK assigns from when the server cannot be reached.
struct ExperimentDefinitionSet: Sendable, Codable {
    struct PlacementEntry: Sendable, Codable, Hashable {
        var id: String
        var defaultPaywall: String
    }

    var placements: [PlacementEntry]
    var experiments: [ExperimentDefinition]
}
