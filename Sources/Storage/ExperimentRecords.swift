import SQLKit

/// A paywall the app renders: its products and any JSON configuration, both stored as JSON text.
public struct PaywallRecord: Sendable, Hashable {
    public var appId: String
    public var id: String
    /// A JSON array of product ids.
    public var products: String
    /// Any JSON value.
    public var config: String
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(appId: String, id: String, products: String, config: String, createdAt: Int64, updatedAt: Int64) {
        self.appId = appId
        self.id = id
        self.products = products
        self.config = config
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A place in the app that shows a paywall, and the paywall it shows when no experiment says otherwise.
public struct PlacementRecord: Sendable, Hashable {
    public var appId: String
    public var id: String
    public var defaultPaywall: String
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(appId: String, id: String, defaultPaywall: String, createdAt: Int64, updatedAt: Int64) {
        self.appId = appId
        self.id = id
        self.defaultPaywall = defaultPaywall
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// An experiment as stored: its definition (JSON) with the status and phase beside it for queries.
public struct ExperimentRecord: Sendable, Hashable {
    public var appId: String
    public var key: String
    public var placementId: String
    public var definition: String
    public var status: String
    public var phase: Int
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        appId: String, key: String, placementId: String, definition: String, status: String, phase: Int, createdAt: Int64,
        updatedAt: Int64
    ) {
        self.appId = appId
        self.key = key
        self.placementId = placementId
        self.definition = definition
        self.status = status
        self.phase = phase
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A customer's first exposure to an experiment's phase.
public struct ExposureRecord: Sendable, Hashable {
    public var experimentKey: String
    public var phase: Int
    public var customerId: String
    public var variant: String
    public var placementId: String
    public var environment: String
    public var exposedAt: Int64

    public init(
        experimentKey: String, phase: Int, customerId: String, variant: String, placementId: String, environment: String,
        exposedAt: Int64
    ) {
        self.experimentKey = experimentKey
        self.phase = phase
        self.customerId = customerId
        self.variant = variant
        self.placementId = placementId
        self.environment = environment
        self.exposedAt = exposedAt
    }
}

/// What one exposed customer did after its first exposure, within the window (only customers who did something).
public struct ExposedOutcome: Sendable, Hashable {
    public var customerId: String
    public var variant: String
    public var exposedAt: Int64
    public var startedTrial: Bool
    public var paid: Bool
    public var refunded: Bool
    /// USD at the ledger's rates; revenue without a rate is left out and flagged by `unconverted`.
    public var grossUSD: Double
    public var refundsUSD: Double
    /// Estimated proceeds net of refunds, in USD.
    public var proceedsUSD: Double
    public var unconverted: Bool
}

extension StorageSession {
    // MARK: paywalls

    public func upsertPaywall(_ record: PaywallRecord) async throws {
        try await sql.insert(into: "paywalls").columns("app_id", "id", "products", "config", "created_at", "updated_at")
            .values(
                SQLBind(record.appId), SQLBind(record.id), SQLBind(record.products), SQLBind(record.config), SQLBind(record.createdAt),
                SQLBind(record.updatedAt)
            )
            .onConflict(with: ["app_id", "id"]) {
                $0.set(excludedValueOf: "products").set(excludedValueOf: "config").set(excludedValueOf: "updated_at")
            }
            .run()
    }

    public func paywalls(app appId: String, id: String? = nil) async throws -> [PaywallRecord] {
        var query = sql.select().columns("app_id", "id", "products", "config", "created_at", "updated_at").from("paywalls")
            .where("app_id", .equal, appId)
        if let id { query = query.where("id", .equal, id) }
        return try await query.orderBy("id").all().map { row in
            PaywallRecord(
                appId: try row.decode(column: "app_id", as: String.self), id: try row.decode(column: "id", as: String.self),
                products: try row.decode(column: "products", as: String.self), config: try row.decode(column: "config", as: String.self),
                createdAt: try row.decode(column: "created_at", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Int64.self))
        }
    }

    /// Whether the paywall existed.
    public func deletePaywall(app appId: String, id: String) async throws -> Bool {
        try await !sql.delete(from: "paywalls").where("app_id", .equal, appId).where("id", .equal, id).returning("id").all().isEmpty
    }

    // MARK: placements

    public func upsertPlacement(_ record: PlacementRecord) async throws {
        try await sql.insert(into: "placements").columns("app_id", "id", "default_paywall", "created_at", "updated_at")
            .values(
                SQLBind(record.appId), SQLBind(record.id), SQLBind(record.defaultPaywall), SQLBind(record.createdAt),
                SQLBind(record.updatedAt)
            )
            .onConflict(with: ["app_id", "id"]) { $0.set(excludedValueOf: "default_paywall").set(excludedValueOf: "updated_at") }
            .run()
    }

    public func placements(app appId: String, id: String? = nil) async throws -> [PlacementRecord] {
        var query = sql.select().columns("app_id", "id", "default_paywall", "created_at", "updated_at").from("placements")
            .where("app_id", .equal, appId)
        if let id { query = query.where("id", .equal, id) }
        return try await query.orderBy("id").all().map { row in
            PlacementRecord(
                appId: try row.decode(column: "app_id", as: String.self), id: try row.decode(column: "id", as: String.self),
                defaultPaywall: try row.decode(column: "default_paywall", as: String.self),
                createdAt: try row.decode(column: "created_at", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Int64.self))
        }
    }

    // MARK: experiments

    private static let experimentColumns = ["app_id", "key", "placement_id", "definition", "status", "phase", "created_at", "updated_at"]

    public func insertExperiment(_ record: ExperimentRecord) async throws {
        try await sql.insert(into: "experiments").columns(Self.experimentColumns)
            .values(
                SQLBind(record.appId), SQLBind(record.key), SQLBind(record.placementId), SQLBind(record.definition),
                SQLBind(record.status), SQLBind(record.phase), SQLBind(record.createdAt), SQLBind(record.updatedAt)
            )
            .run()
    }

    public func updateExperiment(_ record: ExperimentRecord) async throws {
        try await sql.update("experiments")
            .set("placement_id", to: record.placementId).set("definition", to: record.definition).set("status", to: record.status)
            .set("phase", to: record.phase).set("updated_at", to: record.updatedAt)
            .where("app_id", .equal, record.appId).where("key", .equal, record.key).run()
    }

    /// An app's experiments (one when `key` is given), oldest first.
    public func experiments(app appId: String, key: String? = nil) async throws -> [ExperimentRecord] {
        var query = sql.select().columns(Self.experimentColumns).from("experiments").where("app_id", .equal, appId)
        if let key { query = query.where("key", .equal, key) }
        return try await query.orderBy("created_at").orderBy("key").all().map { row in
            ExperimentRecord(
                appId: try row.decode(column: "app_id", as: String.self), key: try row.decode(column: "key", as: String.self),
                placementId: try row.decode(column: "placement_id", as: String.self),
                definition: try row.decode(column: "definition", as: String.self),
                status: try row.decode(column: "status", as: String.self),
                phase: Int(try row.decode(column: "phase", as: Int64.self)),
                createdAt: try row.decode(column: "created_at", as: Int64.self),
                updatedAt: try row.decode(column: "updated_at", as: Int64.self))
        }
    }

    // MARK: assignments and exposures

    /// The variant a customer was given in a phase, if any.
    public func assignment(app appId: String, experiment key: String, phase: Int, customer customerId: String) async throws -> String? {
        try await sql.select().column("variant").from("experiment_assignments")
            .where("app_id", .equal, appId).where("experiment_key", .equal, key).where("phase", .equal, phase)
            .where("customer_id", .equal, customerId)
            .first()?.decode(column: "variant", as: String.self)
    }

    /// Stores a first assignment; an earlier one (another server, a concurrent request) wins. Returns the stored variant.
    public func assign(
        app appId: String, experiment key: String, phase: Int, customer customerId: String, variant: String, at now: Int64
    ) async throws -> String {
        try await sql.insert(into: "experiment_assignments")
            .columns("app_id", "experiment_key", "phase", "customer_id", "variant", "assigned_at")
            .values(SQLBind(appId), SQLBind(key), SQLBind(phase), SQLBind(customerId), SQLBind(variant), SQLBind(now))
            .ignoringConflicts(with: ["app_id", "experiment_key", "phase", "customer_id"]).run()
        return try await assignment(app: appId, experiment: key, phase: phase, customer: customerId) ?? variant
    }

    /// Records a first exposure; returns false (and changes nothing) when the customer was exposed in this phase before.
    public func recordExposure(app appId: String, _ exposure: ExposureRecord) async throws -> Bool {
        try await !sql.raw(
            """
            INSERT INTO experiment_exposures
                (app_id, experiment_key, phase, customer_id, variant, placement_id, environment, exposed_at)
            VALUES (\(bind: appId), \(bind: exposure.experimentKey), \(bind: exposure.phase), \(bind: exposure.customerId),
                \(bind: exposure.variant), \(bind: exposure.placementId), \(bind: exposure.environment), \(bind: exposure.exposedAt))
            ON CONFLICT (app_id, experiment_key, phase, customer_id) DO NOTHING RETURNING customer_id
            """
        ).all().isEmpty
    }

    public func exposure(app appId: String, experiment key: String, phase: Int, customer customerId: String) async throws -> ExposureRecord?
    {
        guard
            let row = try await sql.select().columns("variant", "placement_id", "environment", "exposed_at").from("experiment_exposures")
                .where("app_id", .equal, appId).where("experiment_key", .equal, key).where("phase", .equal, phase)
                .where("customer_id", .equal, customerId).first()
        else { return nil }
        return ExposureRecord(
            experimentKey: key, phase: phase, customerId: customerId, variant: try row.decode(column: "variant", as: String.self),
            placementId: try row.decode(column: "placement_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            exposedAt: try row.decode(column: "exposed_at", as: Int64.self))
    }

    /// A merge's experiments: the surviving customer keeps its own assignments and exposures; the merged one's move to
    /// it where it has none, and the rest stay recorded, marked as merged so that an exposed person is counted once.
    func mergeExperiments(customer from: String, into: String) async throws {
        for table in ["experiment_assignments", "experiment_exposures"] {
            try await sql.raw(
                """
                UPDATE \(ident: table) SET customer_id = \(bind: into)
                WHERE customer_id = \(bind: from) AND NOT EXISTS (
                    SELECT 1 FROM \(ident: table) kept WHERE kept.app_id = \(ident: table).app_id
                        AND kept.experiment_key = \(ident: table).experiment_key AND kept.phase = \(ident: table).phase
                        AND kept.customer_id = \(bind: into))
                """
            ).run()
        }
        try await sql.update("experiment_exposures").set("merged_into", to: into).where("customer_id", .equal, from).run()
    }

    /// The storefront of the customer's latest purchase, if it has one.
    public func latestStorefront(customer customerId: String) async throws -> String? {
        try await sql.raw(
            """
            SELECT storefront FROM ledger WHERE customer_id = \(bind: customerId) AND storefront IS NOT NULL
            ORDER BY start_at DESC LIMIT 1
            """
        ).first()?.decode(column: "storefront", as: String.self)
    }

    // MARK: results

    /// How many customers were exposed to each variant of a phase in an environment (each person once), by the UTC
    /// day (days since 1970) of their first exposure.
    public func exposureCounts(
        app appId: String, experiment key: String, phase: Int, environment: String
    ) async throws -> [(variant: String, day: Int64, count: Int)] {
        try await sql.raw(
            """
            SELECT variant, exposed_at / 86400000 AS day, COUNT(*) AS exposed FROM experiment_exposures
            WHERE app_id = \(bind: appId) AND experiment_key = \(bind: key) AND phase = \(bind: phase)
                AND environment = \(bind: environment) AND merged_into IS NULL
            GROUP BY variant, exposed_at / 86400000
            """
        ).all().map { row in
            (
                try row.decode(column: "variant", as: String.self), try row.decode(column: "day", as: Int64.self),
                Int(try row.decode(column: "exposed", as: Int64.self))
            )
        }
    }

    /// What each exposed customer who started a trial or paid did from its first exposure for `window` ms (nil: with no
    /// end), from the ledger: trials, payments, refunds, USD and estimated proceeds. Customers who did nothing are not
    /// returned (``exposureCounts(app:experiment:phase:environment:)`` counts them).
    public func exposedOutcomes(
        app appId: String, experiment key: String, phase: Int, environment: String, window: Int64?
    ) async throws -> [ExposedOutcome] {
        let end: SQLQueryString = window.map { "AND l.start_at < x.exposed_at + \(bind: $0)" } ?? ""
        // The ledger's own predicates and formulas: their columns are the ledger's alone, so they need no alias.
        let revenue = LedgerSummary.revenue
        let rows = try await sql.raw(
            """
            SELECT x.customer_id, x.variant, x.exposed_at,
                MAX(CASE WHEN \(unsafeRaw: LedgerSummary.trial) THEN 1 ELSE 0 END) AS trial,
                MAX(CASE WHEN \(unsafeRaw: revenue) THEN 1 ELSE 0 END) AS paid,
                MAX(CASE WHEN \(unsafeRaw: revenue) AND refunded_at IS NOT NULL THEN 1 ELSE 0 END) AS refunded,
                MAX(CASE WHEN \(unsafeRaw: revenue) AND usd_rate IS NULL THEN 1 ELSE 0 END) AS unconverted,
                SUM(CASE WHEN \(unsafeRaw: revenue) THEN \(unsafeRaw: LedgerSummary.usd("price")) END) AS gross,
                SUM(CASE WHEN \(unsafeRaw: revenue) THEN \(unsafeRaw: LedgerSummary.usd("COALESCE(refund_amount, 0)")) END) AS refunds,
                SUM(CASE WHEN \(unsafeRaw: revenue) THEN \(unsafeRaw: LedgerSummary.proceeds("price - COALESCE(refund_amount, 0)")) END)
                    AS proceeds
            FROM experiment_exposures x
            JOIN ledger l ON l.customer_id = x.customer_id AND l.environment = x.environment
                AND l.start_at >= x.exposed_at \(end)
            WHERE x.app_id = \(bind: appId) AND x.experiment_key = \(bind: key) AND x.phase = \(bind: phase)
                AND x.environment = \(bind: environment) AND x.merged_into IS NULL
            GROUP BY x.customer_id, x.variant, x.exposed_at
            """
        ).all()
        return try rows.map { row in
            func flag(_ column: String) throws -> Bool { try row.decode(column: column, as: Int64.self) != 0 }
            return ExposedOutcome(
                customerId: try row.decode(column: "customer_id", as: String.self),
                variant: try row.decode(column: "variant", as: String.self),
                exposedAt: try row.decode(column: "exposed_at", as: Int64.self), startedTrial: try flag("trial"), paid: try flag("paid"),
                refunded: try flag("refunded"), grossUSD: try row.decode(column: "gross", as: Double?.self) ?? 0,
                refundsUSD: try row.decode(column: "refunds", as: Double?.self) ?? 0,
                proceedsUSD: try row.decode(column: "proceeds", as: Double?.self) ?? 0, unconverted: try flag("unconverted"))
        }
    }
}
