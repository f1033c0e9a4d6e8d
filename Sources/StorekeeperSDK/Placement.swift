import Experiments
import Foundation

/// What to show at a placement: its paywall, and the split test that chose it when there is one.
public struct Placement: Sendable, Codable, Hashable {
    /// The paywall to show.
    public struct Paywall: Sendable, Codable, Hashable {
        /// The paywall's id, as the team named it on the server.
        public var id: String
        /// The products to offer, in order.
        public var products: [String]
        /// The paywall's own configuration (copy, colours …), as the team wrote it.
        public var config: JSONValue
    }

    /// The experiment that chose the paywall: present while the customer is in a running experiment.
    public struct Experiment: Sendable, Codable, Hashable {
        /// The experiment's key.
        public var key: String
        /// The variant the customer is in.
        public var variant: String
        /// The experiment's phase (a restart or a new allocation starts a new one).
        public var phase: Int
    }

    /// The placement's id, as the app asked for it.
    public var placement: String
    /// The paywall to show there.
    public var paywall: Paywall
    /// The experiment that chose the paywall, when the customer is in one.
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
