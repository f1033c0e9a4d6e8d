import Experiments
import Foundation
import NIOConcurrencyHelpers
import Storage

/// One app's paywalls, placements and experiments as the placement route needs them, worked out once per load: each
/// placement's served experiment prepared for hashing.
struct ServingCatalog: Sendable {
    struct Served: Sendable {
        var experiment: PreparedExperiment
        /// Each variant's paywall (the variant's own, or the placement's default).
        var paywalls: [String: Paywall]
    }

    var placements: [String: PlacementRecord] = [:]
    var paywalls: [String: Paywall] = [:]
    /// By placement: the running or paused experiment, else the one stopped last (its winner is served).
    var served: [String: Served] = [:]
    /// Every experiment that is not a draft, by key.
    var experiments: [String: ExperimentDefinition] = [:]
    /// Every answer the placement route can give, as JSON, made once per load.
    private var encoded: [PlacementAnswer.Key: Data] = [:]

    init() {}

    init(paywalls paywallRecords: [PaywallRecord], placements placementRecords: [PlacementRecord], experiments records: [ExperimentRecord])
        throws(CoreError)
    {
        for record in paywallRecords { paywalls[record.id] = try Paywall(record) }
        for record in placementRecords { placements[record.id] = record }
        var candidates: [String: (definition: ExperimentDefinition, rank: Int, updatedAt: Int64)] = [:]
        for record in records {
            let definition = try Self.definition(record)
            guard definition.status != .draft else { continue }
            experiments[definition.key] = definition
            // A rolled-back experiment serves the placement's default, so it is never the served one.
            let rank =
                switch definition.status {
                case .running, .paused: 2
                case .stopped: 1
                case .draft, .rolledBack: 0
                }
            guard rank > 0 else { continue }
            if let current = candidates[record.placementId], (current.rank, current.updatedAt) >= (rank, record.updatedAt) { continue }
            candidates[record.placementId] = (definition, rank, record.updatedAt)
        }
        for (placementId, candidate) in candidates {
            guard let placement = placements[placementId], let fallback = paywalls[placement.defaultPaywall] else { continue }
            var variantPaywalls: [String: Paywall] = [:]
            for variant in candidate.definition.variants {
                variantPaywalls[variant.key] = variant.paywall.flatMap { paywalls[$0] } ?? fallback
            }
            served[placementId] = Served(experiment: PreparedExperiment(candidate.definition), paywalls: variantPaywalls)
        }
        var answers: [PlacementAnswer] = []
        for placement in placements.values {
            if let paywall = paywalls[placement.defaultPaywall] {
                answers.append(PlacementAnswer(placement: placement.id, paywall: paywall, experiment: nil))
            }
            guard let served = served[placement.id] else { continue }
            let definition = served.experiment.definition
            for (variant, paywall) in served.paywalls {
                answers.append(PlacementAnswer(placement: placement.id, paywall: paywall, experiment: nil))
                answers.append(
                    PlacementAnswer(
                        placement: placement.id, paywall: paywall,
                        experiment: .init(key: definition.key, variant: variant, phase: definition.phase)))
            }
        }
        for answer in answers { encoded[answer.key] = try Self.json(answer) }
    }

    /// The answer with its JSON.
    func withJSON(_ answer: PlacementAnswer) throws(CoreError) -> PlacementAnswer {
        var answer = answer
        if let made = encoded[answer.key] { answer.json = made } else { answer.json = try Self.json(answer) }
        return answer
    }

    /// An answer is strings, numbers and JSON that decoded, so encoding fails only on stored data that is corrupt.
    static func json(_ answer: PlacementAnswer) throws(CoreError) -> Data {
        do {
            return try JSONEncoder.sortedKeys.encode(answer)
        } catch {
            throw .internalError("the answer of placement \(answer.placement) does not encode as JSON")
        }
    }

    static func definition(_ record: ExperimentRecord) throws(CoreError) -> ExperimentDefinition {
        do {
            return try JSONDecoder().decode(ExperimentDefinition.self, from: Data(record.definition.utf8))
        } catch {
            throw .internalError("experiment \(record.key) is stored as a definition that does not decode")
        }
    }
}

/// Each app's ``ServingCatalog``, loaded at most once a second: a change made on this server replaces it at once, and
/// one made on another server sharing the database is seen within the second (the kill switch's promise).
/// Each load also reads the app's identity generation for the customer cache's settled names.
final class ServingCatalogCache: Sendable {
    private let database: StorageDatabase
    private let customers: CustomerStateCache
    private let freshness = Freshness(.seconds(1))
    private let entries = NIOLockedValueBox<[String: (catalog: ServingCatalog, loadedAt: UInt64)]>([:])
    /// Sticky assignments already read or written: they never change within a phase, so they need no expiry.
    private let assignments = NIOLockedValueBox<[String: String]>([:])
    private let assignmentCapacity = 500_000

    init(database: StorageDatabase, customers: CustomerStateCache) {
        self.database = database
        self.customers = customers
    }

    func catalog(app appId: String) async throws -> ServingCatalog {
        if let entry = entries.withLockedValue({ $0[appId] }), freshness.isFresh(entry.loadedAt) { return entry.catalog }
        let loadedAt = Freshness.now
        let (paywalls, placements, experiments, generation) = try await database.reading { session in
            (
                try await session.paywalls(app: appId), try await session.placements(app: appId), try await session.experiments(app: appId),
                try await session.identityGeneration(app: appId)
            )
        }
        let catalog = try ServingCatalog(paywalls: paywalls, placements: placements, experiments: experiments)
        entries.withLockedValue { $0[appId] = (catalog, loadedAt) }
        customers.observeIdentityGeneration(generation, app: appId)
        return catalog
    }

    /// After a change on this server: the next request loads the app's catalog again.
    func invalidate(app appId: String) {
        _ = entries.withLockedValue { $0.removeValue(forKey: appId) }
    }

    private static func key(_ appId: String, _ experiment: String, _ phase: Int, _ customerId: String) -> String {
        "\(appId)|\(experiment)|\(phase)|\(customerId)"
    }

    func assignment(app appId: String, experiment: String, phase: Int, customer customerId: String) -> String? {
        assignments.withLockedValue { $0[Self.key(appId, experiment, phase, customerId)] }
    }

    func remember(app appId: String, experiment: String, phase: Int, customer customerId: String, variant: String) {
        assignments.withLockedValue { cache in
            if cache.count >= assignmentCapacity { cache.removeAll(keepingCapacity: true) }
            cache[Self.key(appId, experiment, phase, customerId)] = variant
        }
    }
}
