import Experiments
import Foundation
import Storage

/// What an operator sends to create or replace a paywall: its products (in the app's catalog) and any JSON.
public struct PaywallInput: Sendable, Decodable {
    public var id: String?
    public var products: [String]
    public var config: JSONValue?

    public init(id: String? = nil, products: [String], config: JSONValue? = nil) {
        self.id = id
        self.products = products
        self.config = config
    }
}

/// An app's paywalls, placements and experiments: created, read, changed (every change audited), and the status
/// changes that start, pause, stop, roll back or ship a test.
public struct ExperimentAdministration: Sendable {
    let database: StorageDatabase
    let catalogs: ServingCatalogCache
    let clock: @Sendable () -> Date

    /// A paywall's `config`, as JSON, at most.
    public static let maxConfigBytes = 64 * 1024
    /// Fields a PATCH may change; `key`, `phase` and `startedAt` are the server's.
    static let patchable: Set<String> = [
        "status", "winner", "variants", "coverage", "targeting", "namespace", "seed", "hashVersion", "placement",
    ]
    /// A change to any of these in a started experiment re-randomises: a new phase.
    static let randomising: Set<String> = ["variants", "targeting", "namespace", "seed", "hashVersion"]

    // MARK: paywalls

    /// Creates or replaces a paywall; true when it was created.
    public func putPaywall(_ id: String, _ input: PaywallInput, app: AppRuntime) async throws -> PaywallPut {
        try ExperimentIds.validate(id, field: "id")
        if let bodyId = input.id, bodyId != id {
            throw CoreError.invalidInput(field: "id", "the body's id '\(bodyId)' is not the path's '\(id)'")
        }
        guard !input.products.isEmpty else {
            throw CoreError.invalidInput(field: "products", "a paywall shows at least one product")
        }
        let known = Set(app.config.catalog.products.map(\.id))
        for (index, product) in input.products.enumerated() where !known.contains(product) {
            throw CoreError.invalidInput(field: "products[\(index)]", "'\(product)' is not a product of the app's catalog")
        }
        if let depth = input.config?.depth, depth > ExperimentDefinition.maxPayloadDepth {
            throw CoreError.invalidInput(
                field: "config", "config nests arrays and objects \(depth) deep; at most \(ExperimentDefinition.maxPayloadDepth)")
        }
        let products = String(decoding: try JSONEncoder.sortedKeys.encode(input.products), as: UTF8.self)
        let config = String(decoding: try JSONEncoder.sortedKeys.encode(input.config ?? .object([:])), as: UTF8.self)
        guard config.utf8.count <= Self.maxConfigBytes else {
            throw CoreError.invalidInput(
                field: "config", "config is \(config.utf8.count) bytes of JSON; at most \(Self.maxConfigBytes)")
        }
        let now = clock().millisecondsSince1970
        let created = try await database.writing { session in
            let existing = try await session.paywalls(app: app.id, id: id).first
            try await session.upsertPaywall(
                PaywallRecord(
                    appId: app.id, id: id, products: products, config: config, createdAt: existing?.createdAt ?? now, updatedAt: now))
            try await session.insertAudit(
                AuditRecord(
                    appId: app.id, action: .paywall,
                    detail: "paywall '\(id)' \(existing == nil ? "created" : "replaced"): products \(products)",
                    at: now))
            return existing == nil
        }
        catalogs.invalidate(app: app.id)
        return PaywallPut(paywall: try await paywall(id, app: app), created: created)
    }

    public func paywall(_ id: String, app: AppRuntime) async throws -> Paywall {
        guard let record = try await database.reading({ try await $0.paywalls(app: app.id, id: id).first }) else {
            throw CoreError.notFound("no paywall '\(id)'")
        }
        return try Paywall(record)
    }

    public func paywalls(app: AppRuntime) async throws -> [Paywall] {
        try await database.reading { try await $0.paywalls(app: app.id) }.map { try Paywall($0) }
    }

    /// Deletes a paywall no placement or experiment uses.
    public func deletePaywall(_ id: String, app: AppRuntime) async throws {
        let now = clock().millisecondsSince1970
        try await database.writing { session in
            if let placement = try await session.placements(app: app.id).first(where: { $0.defaultPaywall == id }) {
                throw CoreError.conflict("paywall '\(id)' is the default of placement '\(placement.id)'")
            }
            for record in try await session.experiments(app: app.id) {
                let definition = try ServingCatalog.definition(record)
                if definition.variants.contains(where: { $0.paywall == id }) {
                    throw CoreError.conflict("paywall '\(id)' is a variant's paywall in experiment '\(record.key)'")
                }
            }
            guard try await session.deletePaywall(app: app.id, id: id) else { throw CoreError.notFound("no paywall '\(id)'") }
            try await session.insertAudit(AuditRecord(appId: app.id, action: .paywall, detail: "paywall '\(id)' deleted", at: now))
        }
        catalogs.invalidate(app: app.id)
    }

    // MARK: placements

    /// Creates or changes a placement; true when it was created.
    public func putPlacement(_ id: String, defaultPaywall: String, app: AppRuntime) async throws -> (
        placement: PlacementView, created: Bool
    ) {
        try ExperimentIds.validate(id, field: "id")
        let now = clock().millisecondsSince1970
        let record = try await database.writing { session in
            guard try await !session.paywalls(app: app.id, id: defaultPaywall).isEmpty else {
                throw CoreError.invalidInput(field: "defaultPaywall", "no paywall '\(defaultPaywall)'")
            }
            let existing = try await session.placements(app: app.id, id: id).first
            let record = PlacementRecord(
                appId: app.id, id: id, defaultPaywall: defaultPaywall, createdAt: existing?.createdAt ?? now, updatedAt: now)
            try await session.upsertPlacement(record)
            try await session.insertAudit(
                AuditRecord(
                    appId: app.id, action: .placement,
                    detail: "placement '\(id)' \(existing == nil ? "created" : "changed"): default paywall '\(defaultPaywall)'", at: now))
            return (record, existing == nil)
        }
        catalogs.invalidate(app: app.id)
        return (PlacementView(record.0), record.1)
    }

    public func placement(_ id: String, app: AppRuntime) async throws -> PlacementView {
        guard let record = try await database.reading({ try await $0.placements(app: app.id, id: id).first }) else {
            throw CoreError.notFound("no placement '\(id)'")
        }
        return PlacementView(record)
    }

    public func placements(app: AppRuntime) async throws -> [PlacementView] {
        try await database.reading { try await $0.placements(app: app.id) }.map(PlacementView.init)
    }

    // MARK: experiments

    /// Creates an experiment from its definition (JSON): a draft unless it says `running` (then it starts at once).
    public func createExperiment(_ body: Data, app: AppRuntime, by actor: String? = nil) async throws -> ExperimentView {
        var definition = try Self.decode(body)
        try ExperimentIds.validate(definition.key, field: "key")
        guard definition.key != "definitions" else {
            throw CoreError.invalidInput(field: "key", "'definitions' is reserved (GET …/experiments/definitions)")
        }
        guard definition.status == .draft || definition.status == .running else {
            throw CoreError.invalidInput(
                field: "status", "a new experiment is a draft or running, not \(definition.status.rawValue)")
        }
        guard definition.winner == nil else { throw CoreError.invalidInput(field: "winner", "a new experiment has no winner") }
        let now = clock().millisecondsSince1970
        if definition.status == .running { definition.startedAt = now } else { definition.startedAt = nil }
        let stored = definition
        let record = try await database.writing { session in
            guard try await session.experiments(app: app.id, key: stored.key).isEmpty else {
                throw CoreError.conflict("experiment '\(stored.key)' exists; change it with PATCH")
            }
            let placementId = try await Self.checkReferences(stored, app: app, session: session)
            let record = ExperimentRecord(
                appId: app.id, key: stored.key, placementId: placementId, definition: try Self.json(stored), status: stored.status.rawValue,
                phase: stored.phase, createdAt: now, updatedAt: now)
            try await session.insertExperiment(record)
            try await session.insertAudit(
                AuditRecord(
                    appId: app.id, action: .experiment,
                    detail:
                        "experiment '\(stored.key)' created (\(stored.status.rawValue), phase \(stored.phase))\(Self.by(actor)): \(record.definition)",
                    at: now))
            return record
        }
        catalogs.invalidate(app: app.id)
        return ExperimentView(definition: stored, createdAt: record.createdAt, updatedAt: record.updatedAt)
    }

    public func experiment(_ key: String, app: AppRuntime) async throws -> ExperimentView {
        guard let record = try await database.reading({ try await $0.experiments(app: app.id, key: key).first }) else {
            throw CoreError.notFound("no experiment '\(key)'")
        }
        return ExperimentView(definition: try ServingCatalog.definition(record), createdAt: record.createdAt, updatedAt: record.updatedAt)
    }

    public func experiments(app: AppRuntime) async throws -> [ExperimentView] {
        try await database.reading { try await $0.experiments(app: app.id) }.map {
            ExperimentView(definition: try ServingCatalog.definition($0), createdAt: $0.createdAt, updatedAt: $0.updatedAt)
        }
    }

    /// Changes an experiment with a JSON object of the fields that change (null removes an optional one). A `winner`
    /// alone stops the test with that winner. In a started experiment, a change of variants, weights, targeting,
    /// namespace, seed or hash version starts a new phase (everyone is assigned again; earlier exposures stay apart);
    /// coverage changes keep the phase (assigned customers stay where they are).
    public func patchExperiment(_ key: String, _ body: Data, app: AppRuntime, by actor: String? = nil) async throws -> ExperimentView {
        let patch = try Self.patchObject(body)
        let now = clock().millisecondsSince1970
        let (record, definition) = try await database.writing { session -> (ExperimentRecord, ExperimentDefinition) in
            guard var record = try await session.experiments(app: app.id, key: key).first else {
                throw CoreError.notFound("no experiment '\(key)'")
            }
            let old = try ServingCatalog.definition(record)
            guard case .object(var merged) = try JSONDecoder().decode(JSONValue.self, from: Data(record.definition.utf8)) else {
                throw CoreError.internalError("experiment \(key) is stored as a definition that is not an object")
            }
            for (field, value) in patch { merged[field] = value == .null ? nil : value }
            if patch["winner"] != nil, patch["status"] == nil, patch["winner"] != .null { merged["status"] = .string("stopped") }
            var next = try Self.decode(try JSONEncoder.sortedKeys.encode(JSONValue.object(merged)))
            try Self.checkTransition(from: old, to: next)
            var changes: [String] = []
            if old.status != next.status { changes.append("status \(old.status.rawValue) → \(next.status.rawValue)") }
            let started = old.status == .running || old.status == .paused
            if started, Self.randomising.contains(where: { patch[$0] != nil }), Self.assignmentChanged(old, next) {
                next.phase = old.phase + 1
                changes.append("phase \(old.phase) → \(next.phase)")
            }
            if next.status == .running, next.startedAt == nil { next.startedAt = now }
            let placementId = try await Self.checkReferences(next, app: app, session: session, except: key)
            if placementId != record.placementId, old.status != .draft {
                throw CoreError.invalidInput(field: "placement", "a started experiment stays on its placement")
            }
            record.placementId = placementId
            record.definition = try Self.json(next)
            record.status = next.status.rawValue
            record.phase = next.phase
            record.updatedAt = now
            try await session.updateExperiment(record)
            let patchText = String(decoding: try JSONEncoder.sortedKeys.encode(JSONValue.object(patch)), as: UTF8.self)
            try await session.insertAudit(
                AuditRecord(
                    appId: app.id, action: .experiment,
                    detail:
                        "experiment '\(key)' changed\(changes.isEmpty ? "" : " (\(changes.joined(separator: "; ")))")\(Self.by(actor)): \(patchText)",
                    at: now))
            return (record, next)
        }
        catalogs.invalidate(app: app.id)
        return ExperimentView(definition: definition, createdAt: record.createdAt, updatedAt: record.updatedAt)
    }

    /// What an SDK needs to assign offline.
    public func definitions(app: AppRuntime) async throws -> ExperimentDefinitions {
        let catalog = try await catalogs.catalog(app: app.id)
        return ExperimentDefinitions(
            placements: catalog.placements.values.sorted { $0.id < $1.id }.map { .init(id: $0.id, defaultPaywall: $0.defaultPaywall) },
            experiments: catalog.experiments.values.sorted { $0.key < $1.key })
    }

    // MARK: rules

    static func decode(_ data: Data) throws(CoreError) -> ExperimentDefinition {
        do {
            return try ExperimentDefinition.decode(data, requireWeightsSumToOne: true)
        } catch {
            throw .invalidInput(field: error.field, error.message)
        }
    }

    static func patchObject(_ body: Data) throws(CoreError) -> [String: JSONValue] {
        guard case .object(let patch)? = try? JSONDecoder().decode(JSONValue.self, from: body) else {
            throw .invalidInput("the body is a JSON object of the fields that change")
        }
        if let field = patch.keys.sorted().first(where: { !patchable.contains($0) }) {
            throw .invalidInput(
                field: field,
                "'\(field)' cannot be changed; an experiment's changeable fields are \(patchable.sorted().joined(separator: ", "))")
        }
        return patch
    }

    /// draft → running; running ⇄ paused; running or paused → stopped (with a winner) or rolled back. Stopped and
    /// rolled-back experiments are finished: nothing of them changes.
    static func checkTransition(from old: ExperimentDefinition, to next: ExperimentDefinition) throws(CoreError) {
        switch (old.status, next.status) {
        case (.stopped, _), (.rolledBack, _):
            throw .conflict("experiment '\(old.key)' is \(old.status.rawValue): a finished experiment does not change")
        case (.draft, .draft), (.draft, .running), (.running, .running), (.running, .paused), (.paused, .paused), (.paused, .running),
            (.running, .stopped), (.paused, .stopped), (.running, .rolledBack), (.paused, .rolledBack):
            return
        case (let from, let to):
            throw .conflict("experiment '\(old.key)' cannot go from \(from.rawValue) to \(to.rawValue)")
        }
    }

    /// Whether the change moves people: the variants (keys or weights), targeting, namespace, seed or hash version.
    static func assignmentChanged(_ a: ExperimentDefinition, _ b: ExperimentDefinition) -> Bool {
        a.variants.map(\.key) != b.variants.map(\.key) || a.normalisedWeights != b.normalisedWeights || a.targeting != b.targeting
            || a.namespace != b.namespace || a.effectiveSeed != b.effectiveSeed || (a.hashVersion ?? 2) != (b.hashVersion ?? 2)
    }

    /// The placement exists, every variant's paywall exists, and no other experiment runs on the placement. Returns
    /// the placement's id.
    static func checkReferences(
        _ definition: ExperimentDefinition, app: AppRuntime, session: StorageSession, except key: String? = nil
    ) async throws -> String {
        guard let placementId = definition.placement else {
            throw CoreError.invalidInput(field: "placement", "an experiment runs on a placement: name it")
        }
        guard try await !session.placements(app: app.id, id: placementId).isEmpty else {
            throw CoreError.invalidInput(field: "placement", "no placement '\(placementId)'")
        }
        let paywalls = Set(try await session.paywalls(app: app.id).map(\.id))
        for (index, variant) in definition.variants.enumerated() {
            if let paywall = variant.paywall, !paywalls.contains(paywall) {
                throw CoreError.invalidInput(field: "variants[\(index)].paywall", "no paywall '\(paywall)'")
            }
        }
        if definition.status == .running || definition.status == .paused {
            for other in try await session.experiments(app: app.id) where other.key != (key ?? definition.key) {
                if other.placementId == placementId, other.status == "running" || other.status == "paused" {
                    throw CoreError.conflict("experiment '\(other.key)' already runs on placement '\(placementId)'")
                }
            }
        }
        return placementId
    }

    /// ` by <who>` for the audit log, when a person (a dashboard user) made the change; the API's key is the app's.
    static func by(_ actor: String?) -> String { actor.map { " by \($0)" } ?? "" }

    static func json(_ definition: ExperimentDefinition) throws -> String {
        String(decoding: try JSONEncoder.sortedKeys.encode(definition), as: UTF8.self)
    }
}

/// A paywall as stored by a PUT, and whether the PUT created it.
public struct PaywallPut: Sendable {
    public var paywall: Paywall
    public var created: Bool
}
