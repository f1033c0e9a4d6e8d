import Foundation
import SQLKit

/// A destination of an app's events as stored. `config` is readable JSON (no secret ever goes in it); the secrets
/// are a separate JSON document in `integration_secrets`, read only by the worker that sends.
public struct IntegrationRecord: Sendable, Hashable {
    public var id: String
    public var appId: String
    public var kind: String
    public var name: String
    public var config: String
    /// The event types sent; nil sends every type.
    public var events: [String]?
    public var environments: [String]
    public var enabled: Bool
    /// Why the worker disabled it (a permanent answer), until the operator enables it again.
    public var disabledReason: String?
    /// Seconds after each failed attempt; nil is the default schedule.
    public var retrySchedule: [Int64]?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, appId: String, kind: String, name: String, config: String, events: [String]?, environments: [String],
        enabled: Bool, disabledReason: String?, retrySchedule: [Int64]?, createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.appId = appId
        self.kind = kind
        self.name = name
        self.config = config
        self.events = events
        self.environments = environments
        self.enabled = enabled
        self.disabledReason = disabledReason
        self.retrySchedule = retrySchedule
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

extension StorageSession {
    private static let integrationColumns = [
        "id", "app_id", "kind", "name", "config", "events", "environments", "enabled", "disabled_reason", "retry_schedule",
        "created_at", "updated_at",
    ]

    /// Stores a new destination with its secrets (a JSON document).
    public func insertIntegration(_ record: IntegrationRecord, secrets: String) async throws {
        try await sql.insert(into: "integrations").columns(Self.integrationColumns).values(Self.values(record)).run()
        try await sql.insert(into: "integration_secrets").columns("integration_id", "secrets")
            .values(SQLBind(record.id), SQLBind(secrets)).run()
    }

    /// Replaces a destination's stored fields, and its secrets when given.
    public func updateIntegration(_ record: IntegrationRecord, secrets: String?) async throws {
        try await sql.update("integrations")
            .set("name", to: record.name).set("config", to: record.config)
            .set("events", to: SQLBind(try Self.json(record.events))).set("environments", to: SQLBind(try Self.json(record.environments)))
            .set("enabled", to: record.enabled ? 1 : 0).set("disabled_reason", to: SQLBind(record.disabledReason))
            .set("retry_schedule", to: SQLBind(try Self.json(record.retrySchedule))).set("updated_at", to: record.updatedAt)
            .where("id", .equal, record.id).run()
        if let secrets {
            try await sql.update("integration_secrets").set("secrets", to: secrets).where("integration_id", .equal, record.id).run()
        }
    }

    /// Disables a destination with the reason a permanent answer gave; false when it was disabled already (or gone).
    @discardableResult
    public func disableIntegration(id: String, reason: String, at now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE integrations SET enabled = 0, disabled_reason = \(bind: reason), updated_at = \(bind: now)
            WHERE id = \(bind: id) AND enabled = 1 RETURNING id
            """
        ).all().count == 1
    }

    /// Replaces some readable configuration fields of a destination (one that moved, such as a migrated Telegram chat).
    public func mergeIntegrationConfig(id: String, fields: [String: String], at now: Int64) async throws {
        guard let record = try await integration(id: id) else { return }
        var config = try Self.decodeJSON(record.config, as: [String: String].self, column: "config") ?? [:]
        config.merge(fields) { _, new in new }
        try await sql.update("integrations").set("config", to: try Self.json(config) ?? "{}").set("updated_at", to: now)
            .where("id", .equal, id).run()
    }

    /// Deletes a destination, its secrets and its deliveries.
    public func deleteIntegration(id: String) async throws {
        try await sql.delete(from: "deliveries").where("integration_id", .equal, id).run()
        try await sql.delete(from: "integration_secrets").where("integration_id", .equal, id).run()
        try await sql.delete(from: "integrations").where("id", .equal, id).run()
    }

    public func integration(id: String) async throws -> IntegrationRecord? {
        try await sql.select().columns(Self.integrationColumns).from("integrations").where("id", .equal, id).first()
            .map(Self.integrationRecord)
    }

    /// An app's destinations, oldest first.
    public func integrations(app appId: String) async throws -> [IntegrationRecord] {
        try await sql.select().columns(Self.integrationColumns).from("integrations").where("app_id", .equal, appId)
            .orderBy("created_at").orderBy("id").all().map(Self.integrationRecord)
    }

    /// What the delivery worker reads before it serves, in one statement: the enabled destinations (of every app) with
    /// a delivery due at `now`, and the apps with an enabled destination.
    public func enabledIntegrations(dueAt now: Int64) async throws -> EnabledIntegrations {
        let rows = try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.integrationColumns.joined(separator: ", ")),
                CASE WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.integration_id = i.id AND d.status IN ('pending', 'retrying')
                    AND d.next_attempt_at <= \(bind: now)) THEN 1 ELSE 0 END AS due
            FROM integrations i WHERE i.enabled = 1 ORDER BY i.id
            """
        ).all()
        var apps = Set<String>()
        var due: [IntegrationRecord] = []
        for row in rows {
            apps.insert(try row.decode(column: "app_id", as: String.self))
            if try row.decode(column: "due", as: Int.self) == 1 { due.append(try Self.integrationRecord(row)) }
        }
        return EnabledIntegrations(due: due, apps: apps)
    }

    /// A destination's secrets document.
    public func integrationSecrets(id: String) async throws -> String? {
        try await sql.select().column("secrets").from("integration_secrets").where("integration_id", .equal, id).first()
            .map { try $0.decode(column: "secrets", as: String.self) }
    }

    private static func values(_ record: IntegrationRecord) throws -> [any SQLExpression] {
        [
            SQLBind(record.id), SQLBind(record.appId), SQLBind(record.kind), SQLBind(record.name), SQLBind(record.config),
            SQLBind(try json(record.events)), SQLBind(try json(record.environments)), SQLBind(record.enabled ? 1 : 0),
            SQLBind(record.disabledReason), SQLBind(try json(record.retrySchedule)), SQLBind(record.createdAt),
            SQLBind(record.updatedAt),
        ]
    }

    /// One of each, shared: destinations are decoded on the ingest path (every write of events reads the app's).
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    private static func json<T: Encodable>(_ value: T?) throws -> String? {
        guard let value else { return nil }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decodeJSON<T: Decodable>(_ text: String?, as type: T.Type, column: String) throws -> T? {
        guard let text else { return nil }
        do {
            return try decoder.decode(T.self, from: Data(text.utf8))
        } catch {
            throw StorageError(.corrupt, "integrations.\(column) holds '\(text)'")
        }
    }

    static func integrationRecord(_ row: any SQLRow) throws -> IntegrationRecord {
        let environments = try row.decode(column: "environments", as: String.self)
        return IntegrationRecord(
            id: try row.decode(column: "id", as: String.self),
            appId: try row.decode(column: "app_id", as: String.self),
            kind: try row.decode(column: "kind", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            config: try row.decode(column: "config", as: String.self),
            events: try decodeJSON(try row.decode(column: "events", as: String?.self), as: [String].self, column: "events"),
            environments: try decodeJSON(environments, as: [String].self, column: "environments") ?? [],
            enabled: try row.decode(column: "enabled", as: Int64.self) != 0,
            disabledReason: try row.decode(column: "disabled_reason", as: String?.self),
            retrySchedule: try decodeJSON(
                try row.decode(column: "retry_schedule", as: String?.self), as: [Int64].self, column: "retry_schedule"),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }
}

/// The enabled destinations with a delivery due, and every app with an enabled destination.
public struct EnabledIntegrations: Sendable {
    public var due: [IntegrationRecord]
    public var apps: Set<String>
}
