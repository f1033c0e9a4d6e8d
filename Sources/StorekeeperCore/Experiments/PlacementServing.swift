import AppStore
import Experiments
import Foundation
import Storage

/// What the app asks with its public key: the paywall of a placement for a customer (assigning the customer to the
/// placement's running experiment, once per phase), and the record of the customer's first exposure.
public struct PlacementServing: Sendable {
    let database: StorageDatabase
    let catalogs: ServingCatalogCache
    let customers: CustomerReads
    /// New app user ids a client address may have made customers of by placement reads (shared with `AccountTokens`).
    let newIds: ClientRateLimiter
    let clock: @Sendable () -> Date

    /// What the app tells about itself; it targets, it never chooses the arm (the app user id is what is hashed).
    public struct AppContext: Sendable {
        public var appVersion: String?
        public var storefront: String?
        public var environment: Environment
        /// The client's address, for the limit on new ids.
        public var client: String

        public init(appVersion: String?, storefront: String?, environment: Environment, client: String = "unknown") {
            self.appVersion = appVersion
            self.storefront = storefront
            self.environment = environment
            self.client = client
        }
    }

    public func placement(_ placementId: String, for appUserId: String, caller: Caller, context: AppContext) async throws -> PlacementAnswer
    {
        let appUserId = try AppUserIds.validate(appUserId)
        try AppUserIds.checkReadable(appUserId, by: caller.keyKind)
        let app = caller.app
        let catalog = try await catalogs.catalog(app: app.id)
        guard let placement = catalog.placements[placementId] else { throw CoreError.notFound("no placement '\(placementId)'") }
        guard let served = catalog.served[placementId] else {
            return try catalog.withJSON(
                PlacementAnswer(placement: placementId, paywall: try Self.paywall(placement.defaultPaywall, in: catalog), experiment: nil))
        }
        let definition = served.experiment.definition
        // Not running: the control or the winner for everyone, before any stored assignment is looked at.
        guard definition.status == .running else {
            let outside = served.experiment.assign(userId: appUserId)
            return try answer(placement, served, variant: outside.variant, inExperiment: false, catalog: catalog)
        }
        // A client past its allowance of new ids is answered as someone outside the test, and nothing is stored.
        guard let customerId = try await customerId(of: appUserId, app: app, context: context) else {
            let outside = served.experiment.assign(userId: appUserId)
            return try answer(placement, served, variant: outside.variant, inExperiment: false, catalog: catalog)
        }
        let seed = definition.effectiveSeed
        var stored = catalogs.assignment(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId)
        if stored == nil {
            stored = try await database.reading {
                try await $0.assignment(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId)
            }
        }
        if let stored {
            catalogs.remember(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId, variant: stored)
            let sticky = StickyAssignment(experimentKey: definition.key, phase: definition.phase, seed: seed, variant: stored)
            let assignment = served.experiment.assign(userId: appUserId, stored: sticky)
            return try answer(placement, served, variant: assignment.variant, inExperiment: assignment.inExperiment, catalog: catalog)
        }
        let attributes = try await attributes(customerId: customerId, appUserId: appUserId, caller: caller, context: context)
        let assignment = served.experiment.assign(userId: appUserId, attributes: attributes)
        guard assignment.inExperiment, assignment.newStickyAssignment != nil else {
            return try answer(placement, served, variant: assignment.variant, inExperiment: false, catalog: catalog)
        }
        let now = clock().millisecondsSince1970
        let kept = try await database.writing {
            try await $0.assign(
                app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId, variant: assignment.variant, at: now
            )
        }
        catalogs.remember(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId, variant: kept)
        return try answer(placement, served, variant: kept, inExperiment: true, catalog: catalog)
    }

    /// Records the customer's first exposure to the phase it was assigned in. A variant or phase that is not the stored
    /// assignment is a conflict; a repeated exposure changes nothing.
    public func expose(_ input: ExposureInput, for appUserId: String, caller: Caller, environment: Environment) async throws
        -> ExposureAnswer
    {
        let appUserId = try AppUserIds.validate(appUserId)
        try AppUserIds.checkReadable(appUserId, by: caller.keyKind)
        let app = caller.app
        let catalog = try await catalogs.catalog(app: app.id)
        guard let definition = catalog.experiments[input.experiment] else {
            throw CoreError.notFound("no experiment '\(input.experiment)' has started")
        }
        guard catalog.placements[input.placement] != nil else { throw CoreError.notFound("no placement '\(input.placement)'") }
        guard let customerId = try await customers.customerId(of: appUserId, app: app) else {
            throw CoreError.conflict("\(appUserId) was never assigned to '\(input.experiment)': ask for the placement first")
        }
        let phase = definition.phase
        guard input.phase == phase else {
            throw CoreError.conflict("phase \(input.phase) of '\(definition.key)' is over; its current phase is \(phase)")
        }
        let now = clock().millisecondsSince1970
        return try await database.writing { session in
            guard
                let stored = try await session.assignment(app: app.id, experiment: definition.key, phase: input.phase, customer: customerId)
            else {
                throw CoreError.conflict(
                    "\(appUserId) has no assignment in phase \(phase) of '\(definition.key)': ask for the placement first")
            }
            guard stored == input.variant else {
                throw CoreError.conflict("\(appUserId) is assigned to '\(stored)' in '\(definition.key)', not '\(input.variant)'")
            }
            let exposure = ExposureRecord(
                experimentKey: definition.key, phase: input.phase, customerId: customerId, variant: stored, placementId: input.placement,
                environment: environment.rawValue, exposedAt: now)
            if try await session.recordExposure(app: app.id, exposure) {
                return ExposureAnswer(
                    recorded: true, experiment: definition.key, variant: stored, phase: input.phase, placement: input.placement,
                    exposedAt: now)
            }
            guard
                let first = try await session.exposure(app: app.id, experiment: definition.key, phase: input.phase, customer: customerId)
            else { throw CoreError.internalError("an exposure vanished while it was recorded") }
            return ExposureAnswer(
                recorded: false, experiment: definition.key, variant: first.variant, phase: first.phase, placement: first.placementId,
                exposedAt: first.exposedAt)
        }
    }

    /// The customer behind the app user id, created when the app asks before anything else happened (the assignment
    /// is stored against it, and survives the customer's later purchases and merges); nil when it would be new and the
    /// client has made its allowance of new ids this minute.
    private func customerId(of appUserId: String, app: AppRuntime, context: AppContext) async throws -> String? {
        let cache = customers.cache
        if let settled = cache.settledCustomerId(app: app.id, appUserId: appUserId) { return settled }
        let customerId: String
        if let known = try await customers.customerId(of: appUserId, app: app) {
            customerId = known
        } else {
            let now = clock().millisecondsSince1970
            guard newIds.take(client: context.client, now: now) == nil else { return nil }
            customerId = try await database.writing {
                try await $0.findOrCreateCustomer(
                    app: app.id, appUserId: appUserId, anonymous: false, newId: CustomerIds.new(), at: now,
                    environment: context.environment.rawValue)
            }.id
        }
        cache.rememberSettled(app: app.id, appUserId: appUserId, customerId: customerId)
        return customerId
    }

    /// What the server knows (the customer's state, when it was first seen, the storefront of its latest purchase) and
    /// what the app sends (its version; its storefront when the server knows none).
    private func attributes(customerId: String, appUserId: String, caller: Caller, context: AppContext) async throws -> UserAttributes {
        let read = try await customers.state(of: appUserId, caller: caller, environment: context.environment)
        let state = try read.snapshot.state()
        let (firstSeen, storefront) = try await database.reading { session in
            (try await session.customer(id: customerId)?.createdAt, try await session.latestStorefront(customer: customerId))
        }
        let customerState: ExperimentDefinition.CustomerState =
            switch state.state {
            case .new: .new
            case .active: .active
            case .inactive: .inactive
            }
        return UserAttributes(
            storefront: storefront ?? context.storefront, appVersion: context.appVersion, customerState: customerState,
            firstSeenAt: firstSeen)
    }

    private func answer(
        _ placement: PlacementRecord, _ served: ServingCatalog.Served, variant: String, inExperiment: Bool, catalog: ServingCatalog
    ) throws -> PlacementAnswer {
        let paywall = try served.paywalls[variant] ?? Self.paywall(placement.defaultPaywall, in: catalog)
        let definition = served.experiment.definition
        return try catalog.withJSON(
            PlacementAnswer(
                placement: placement.id, paywall: paywall,
                experiment: inExperiment ? .init(key: definition.key, variant: variant, phase: definition.phase) : nil))
    }

    private static func paywall(_ id: String, in catalog: ServingCatalog) throws(CoreError) -> Paywall {
        guard let paywall = catalog.paywalls[id] else {
            throw .internalError("the placement's paywall '\(id)' is missing")
        }
        return paywall
    }
}
