import AppStore
import Entitlements
import Foundation
import Integrations
import Storage

/// What an operator sends to create (every field but `config`'s optional ones) or change (only what changes) a
/// destination. In `config`, a secret field is stored apart and never shown again; in a change, null removes an
/// optional field and `events: null` sends every type again.
public struct IntegrationInput: Sendable {
    public var kind: String?
    public var name: String?
    public var config: [String: String?]?
    public var events: [String]??
    public var environments: [String]?
    public var enabled: Bool?
    public var retrySchedule: [Int64]??

    public init(
        kind: String? = nil, name: String? = nil, config: [String: String?]? = nil, events: [String]?? = nil,
        environments: [String]? = nil, enabled: Bool? = nil, retrySchedule: [Int64]?? = nil
    ) {
        self.kind = kind
        self.name = name
        self.config = config
        self.events = events
        self.environments = environments
        self.enabled = enabled
        self.retrySchedule = retrySchedule
    }
}

/// A destination as the API shows it: never a secret, only which secret fields are set. `signingSecret` is there once,
/// in the answer that creates a webhook or rotates its secret.
public struct IntegrationView: Sendable, Codable, Hashable {
    public var id: String
    public var kind: String
    public var name: String
    public var config: [String: String]
    public var secretsConfigured: [String]
    public var events: [String]?
    public var environments: [String]
    public var enabled: Bool
    public var disabledReason: String?
    public var retrySchedule: [Int64]?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var signingSecret: String?
}

/// One delivery as the API shows it (its last answer's body with every secret of the destination removed).
public struct DeliveryView: Sendable, Codable, Hashable {
    public var id: String
    public var eventId: String
    public var retraction: Bool
    public var status: String
    public var attempts: Int
    public var nextAttemptAt: Int64?
    public var firstAttemptAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var lastStatus: Int?
    public var lastResponse: String?
    public var lastLatencyMs: Int64?
    public var lastError: String?

    init(_ record: DeliveryRecord) {
        id = record.id
        eventId = record.eventId
        retraction = record.retraction
        // A claimed row is still pending or retrying; its next attempt is the lease's end.
        status = record.status.rawValue
        attempts = record.attempts
        nextAttemptAt = record.nextAttemptAt
        firstAttemptAt = record.firstAttemptAt
        createdAt = record.createdAt
        updatedAt = record.updatedAt
        lastStatus = record.lastStatus
        lastResponse = record.lastResponse
        lastLatencyMs = record.lastLatencyMs
        lastError = record.lastError
    }
}

public struct DeliveryPage: Sendable, Codable, Hashable {
    public var deliveries: [DeliveryView]
    /// Pass as `after` for the next (older) page; nil when this page is the last.
    public var nextCursor: String?
}

/// What a destination answered to a test message.
public struct TestResult: Sendable, Codable, Hashable {
    public var delivered: Bool
    public var status: Int?
    public var response: String?
    public var error: String?
    public var latencyMs: Int64
}

/// An app's destinations: create, read, change, delete, test, and their deliveries (list, retry one, replay a range).
public struct IntegrationAdministration: Sendable {
    let database: StorageDatabase
    let registry: AppRegistry
    let sender: DeliverySender
    let signal: OutboxSignal
    let clock: @Sendable () -> Date

    /// How long a rotated-out webhook secret keeps signing beside the new one.
    public static let rotationOverlap: Int64 = 24 * 3600 * 1000
    public static let maxNameLength = 100
    public static let deliveryPageLimits = 1...500

    public func create(_ input: IntegrationInput, app: AppRuntime) async throws -> IntegrationView {
        guard let kindName = input.kind else { throw CoreError.invalidInput(field: "kind", "kind is required") }
        guard let kind = DestinationKind(rawValue: kindName) else {
            throw CoreError.invalidInput(
                field: "kind", "unknown kind '\(kindName)': \(DestinationKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let (readable, secretFields) = try Self.split(kind, input.config ?? [:], existing: nil)
        try await checkAddresses(kind, readable: readable, secrets: secretFields)
        let now = clock().millisecondsSince1970
        var secrets = DestinationSecrets(fields: secretFields)
        var shown: String?
        if kind == .webhook {
            let secret = WebhookSecret.generate().text
            secrets.signing = [.init(secret: secret, until: nil)]
            shown = secret
        }
        let record = IntegrationRecord(
            id: "int_" + Hex.random(bytes: 8), appId: app.id, kind: kind.rawValue, name: try Self.name(input.name ?? kind.rawValue),
            config: try Self.encode(readable), events: try Self.events(input.events ?? nil),
            environments: try Self.environments(input.environments ?? Self.defaultEnvironments(app), app: app),
            enabled: input.enabled ?? true,
            disabledReason: nil, retrySchedule: try Self.schedule(input.retrySchedule ?? nil), createdAt: now, updatedAt: now)
        let encoded = try Self.encode(secrets)
        try await database.writing { try await $0.insertIntegration(record, secrets: encoded) }
        // The worker learns of the app's destination at once, so that the app's next ingest wakes it.
        signal.poke()
        var view = try Self.view(record, secrets: secrets)
        view.signingSecret = shown
        return view
    }

    public func list(app: AppRuntime) async throws -> [IntegrationView] {
        try await database.reading { session in
            var views: [IntegrationView] = []
            for record in try await session.integrations(app: app.id) {
                views.append(try Self.view(record, secrets: try await Self.secrets(session, record.id)))
            }
            return views
        }
    }

    public func get(_ id: String, app: AppRuntime) async throws -> IntegrationView {
        let (record, secrets) = try await stored(id, app: app)
        return try Self.view(record, secrets: secrets)
    }

    /// Changes what `input` gives. Enabling a destination clears the reason it was disabled for, and its waiting
    /// deliveries flow again.
    public func update(_ id: String, with input: IntegrationInput, app: AppRuntime) async throws -> IntegrationView {
        let (stored, storedSecrets) = try await stored(id, app: app)
        if let kind = input.kind, kind != stored.kind {
            throw CoreError.invalidInput(field: "kind", "a destination's kind cannot change: create another")
        }
        guard let kind = DestinationKind(rawValue: stored.kind) else {
            throw CoreError.internalError("integration \(id) has an unknown kind '\(stored.kind)'")
        }
        var record = stored
        var secrets = storedSecrets
        if let config = input.config {
            let split = try Self.split(kind, config, existing: (try Self.decode(stored.config), storedSecrets.fields))
            try await checkAddresses(kind, readable: split.readable, secrets: split.secrets)
            record.config = try Self.encode(split.readable)
            secrets.fields = split.secrets
        }
        if let name = input.name { record.name = try Self.name(name) }
        if let events = input.events { record.events = try Self.events(events) }
        if let environments = input.environments { record.environments = try Self.environments(environments, app: app) }
        if let schedule = input.retrySchedule { record.retrySchedule = try Self.schedule(schedule) }
        if let enabled = input.enabled {
            record.enabled = enabled
            if enabled { record.disabledReason = nil }
        }
        record.updatedAt = clock().millisecondsSince1970
        let encoded = input.config == nil ? nil : try Self.encode(secrets)
        let changed = record
        try await database.writing { try await $0.updateIntegration(changed, secrets: encoded) }
        signal.poke()
        return try Self.view(record, secrets: secrets)
    }

    /// Deletes a destination and its deliveries (nothing waiting for it is sent).
    public func delete(_ id: String, app: AppRuntime) async throws {
        _ = try await stored(id, app: app)
        try await database.writing { try await $0.deleteIntegration(id: id) }
    }

    /// A new webhook signing secret, answered once; the previous one keeps signing beside it for a day
    /// (`rotationOverlap`), so receivers can switch without losing a message.
    public func rotateSecret(_ id: String, app: AppRuntime) async throws -> IntegrationView {
        let (record, stored) = try await stored(id, app: app)
        guard record.kind == DestinationKind.webhook.rawValue else {
            throw CoreError.invalidInput("only a webhook has a signing secret")
        }
        let now = clock().millisecondsSince1970
        var secrets = stored
        let secret = WebhookSecret.generate().text
        secrets.signing = secrets.signing.filter { ($0.until ?? .max) > now }.map {
            .init(secret: $0.secret, until: min($0.until ?? .max, now + Self.rotationOverlap))
        }
        secrets.signing.insert(.init(secret: secret, until: nil), at: 0)
        var changed = record
        changed.updatedAt = now
        let encoded = try Self.encode(secrets)
        let updated = changed
        try await database.writing { try await $0.updateIntegration(updated, secrets: encoded) }
        var view = try Self.view(changed, secrets: secrets)
        view.signingSecret = secret
        return view
    }

    /// Sends a test message now (not stored, not retried) and answers what the destination said.
    public func test(_ id: String, app: AppRuntime) async throws -> TestResult {
        let (record, secrets) = try await stored(id, app: app)
        let now = clock().millisecondsSince1970
        let event = OutboundEvent(
            deliveryId: "msg_test_" + Hex.random(bytes: 8), eventId: "test_" + Hex.random(bytes: 8), type: OutboundEvent.testType,
            effectiveAt: now, recordedAt: now, retractedAt: nil, environment: record.environments.first ?? "Production",
            productId: nil, price: nil, currency: nil, usdPrice: nil, appId: app.id, bundleId: app.config.bundleId,
            customerId: "test", appUserId: "test", aliases: [],
            eventJSON: #"{"id":"test","type":"test","effectiveAt":\#(now),"productId":null}"#, stateJSON: nil)
        let outcome = await sender.send([event], to: record, secrets: secrets, now: now)
        return TestResult(
            delivered: outcome.verdicts.allSatisfy { $0 == .delivered }, status: outcome.answer.status,
            response: outcome.redactedBody,
            error: outcome.redactedFailure ?? outcome.verdicts.compactMap(\.reason).first,
            latencyMs: outcome.latencyMs)
    }

    /// A destination's deliveries, newest first, optionally of one status; `after` is the previous page's `nextCursor`.
    public func deliveries(_ id: String, app: AppRuntime, status: String?, after: String?, limit: Int?) async throws -> DeliveryPage {
        _ = try await stored(id, app: app)
        var parsedStatus: DeliveryStatus?
        if let status {
            guard let known = DeliveryStatus(rawValue: status) else {
                throw CoreError.invalidInput(
                    field: "status", "status is one of \(DeliveryStatus.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            parsedStatus = known
        }
        var before: Int64?
        if let after {
            // Digits only, as the OpenAPI pattern says (Int64 alone would take "+5").
            guard (1...18).contains(after.utf8.count), after.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seq = Int64(after), seq > 0
            else {
                throw CoreError.invalidInput(field: "after", "after is a nextCursor of a previous page")
            }
            before = seq
        }
        let limit = limit ?? 100
        guard Self.deliveryPageLimits.contains(limit) else {
            throw CoreError.invalidInput(
                field: "limit", "limit is \(Self.deliveryPageLimits.lowerBound) to \(Self.deliveryPageLimits.upperBound)")
        }
        let (status, beforeSeq) = (parsedStatus, before)
        let page = try await database.reading {
            try await $0.deliveries(integration: id, status: status, beforeSeq: beforeSeq, limit: limit)
        }
        return DeliveryPage(
            deliveries: page.map(DeliveryView.init), nextCursor: page.count == limit ? page.last.map { "\($0.eventSeq)" } : nil)
    }

    /// How many of a destination's deliveries are in each status.
    public func counts(_ id: String, app: AppRuntime) async throws -> [String: Int] {
        _ = try await stored(id, app: app)
        return try await database.reading { try await $0.deliveryCounts(integration: id) }.reduce(into: [:]) {
            $0[$1.key.rawValue] = $1.value
        }
    }

    /// Makes one delivery due now with a fresh schedule (the same id).
    public func retry(_ id: String, delivery deliveryId: String, app: AppRuntime) async throws -> DeliveryView {
        _ = try await stored(id, app: app)
        guard let key = DeliveryRecord.key(of: deliveryId), key.integrationId == id else {
            throw CoreError.notFound("no delivery \(deliveryId) for integration \(id)")
        }
        let now = clock().millisecondsSince1970
        let record = try await database.writing { session -> DeliveryRecord? in
            guard try await session.resetDeliveries(integration: id, eventSeq: key.eventSeq, at: now) == 1 else { return nil }
            return try await session.delivery(integration: id, eventSeq: key.eventSeq)
        }
        guard let record else { throw CoreError.notFound("no delivery \(deliveryId) for integration \(id)") }
        signal.poke()
        return DeliveryView(record)
    }

    /// Sends again the deliveries created in `[from, to)` (ms since 1970), the dead ones or all, with their ids.
    public func replay(_ id: String, app: AppRuntime, from: Int64, to: Int64, status: String) async throws -> Int {
        _ = try await stored(id, app: app)
        guard from < to else { throw CoreError.invalidInput(field: "to", "to is after from") }
        let only: DeliveryStatus?
        switch status {
        case "dead": only = .dead
        case "all": only = nil
        default: throw CoreError.invalidInput(field: "status", "status is dead or all")
        }
        let now = clock().millisecondsSince1970
        let count = try await database.writing {
            try await $0.resetDeliveries(integration: id, createdFrom: from, to: to, status: only, at: now)
        }
        signal.poke()
        return count
    }

    // MARK: - Stored destinations

    private func stored(_ id: String, app: AppRuntime) async throws -> (IntegrationRecord, DestinationSecrets) {
        let found = try await database.reading { session -> (IntegrationRecord, DestinationSecrets)? in
            guard let record = try await session.integration(id: id), record.appId == app.id else { return nil }
            return (record, try await Self.secrets(session, id))
        }
        guard let found else { throw CoreError.notFound("no integration \(id) in app \(app.id)") }
        return found
    }

    static func secrets(_ session: StorageSession, _ id: String) async throws -> DestinationSecrets {
        guard let text = try await session.integrationSecrets(id: id) else { return DestinationSecrets(fields: [:]) }
        do {
            return try JSONDecoder().decode(DestinationSecrets.self, from: Data(text.utf8))
        } catch {
            throw CoreError.internalError("integration \(id)'s secrets do not decode")
        }
    }

    static func view(_ record: IntegrationRecord, secrets: DestinationSecrets) throws -> IntegrationView {
        IntegrationView(
            id: record.id, kind: record.kind, name: record.name, config: try decode(record.config),
            secretsConfigured: (Array(secrets.fields.keys) + (secrets.signing.isEmpty ? [] : ["signingSecret"])).sorted(),
            events: record.events, environments: record.environments, enabled: record.enabled, disabledReason: record.disabledReason,
            retrySchedule: record.retrySchedule, createdAt: record.createdAt, updatedAt: record.updatedAt, signingSecret: nil)
    }

    // MARK: - Checks

    /// Refuses a destination the server would never call: a URL field whose host is, or resolves to, an internal
    /// address while `STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS` is off (400 naming the field and the setting), rather than
    /// accepting it and disabling it at its first event. A name that does not resolve now is accepted: its deliveries
    /// retry on the schedule.
    private func checkAddresses(_ kind: DestinationKind, readable: [String: String], secrets: [String: String]) async throws {
        for field in kind.fields where field.form == .url {
            guard let url = field.secret ? secrets[field.name] : readable[field.name] else { continue }
            do {
                try await sender.transport.policy.check(url)
            } catch  where error.code == .forbiddenAddress {
                throw CoreError.invalidInput(field: "config.\(field.name)", error.message)
            } catch {
                continue
            }
        }
    }

    private static func split(
        _ kind: DestinationKind, _ config: [String: String?], existing: (readable: [String: String], secrets: [String: String])?
    ) throws(CoreError) -> (readable: [String: String], secrets: [String: String]) {
        do {
            return try kind.split(config, existing: existing)
        } catch {
            throw .invalidInput(field: error.field, error.message)
        }
    }

    /// A name as given is at most `maxNameLength` Unicode scalars (what the schema's `maxLength` counts), on one line
    /// and without NUL (as an app user id); it is stored without the spaces around it, which must leave something.
    private static func name(_ name: String) throws(CoreError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, name.unicodeScalars.count <= maxNameLength,
            !name.unicodeScalars.contains(where: AppUserIds.refusedScalars.contains)
        else {
            throw .invalidInput(field: "name", "name is 1 to \(maxNameLength) characters on one line, without NUL")
        }
        return trimmed
    }

    private static func events(_ events: [String]?) throws(CoreError) -> [String]? {
        guard let events else { return nil }
        guard !events.isEmpty else { throw .invalidInput(field: "events", "events lists at least one type (null: every type)") }
        for type in events where SubscriptionEventType(rawValue: type) == nil {
            throw .invalidInput(field: "events", "unknown event type '\(type)' (docs/events.md lists them)")
        }
        return Array(Set(events)).sorted()
    }

    /// Production when the app accepts it; otherwise (an app still in testing) every environment it accepts.
    static func defaultEnvironments(_ app: AppRuntime) -> [String] {
        app.config.environments.contains("Production") ? ["Production"] : app.config.environments
    }

    private static func environments(_ environments: [String], app: AppRuntime) throws(CoreError) -> [String] {
        guard !environments.isEmpty else { throw .invalidInput(field: "environments", "environments lists at least one") }
        var spelled: [String] = []
        for environment in environments {
            // Any case on input, Apple's spelling stored.
            guard let known = app.config.environments.first(where: { $0.caseInsensitiveCompare(environment) == .orderedSame }) else {
                throw .invalidInput(
                    field: "environments",
                    "the app does not accept \(environment) (it accepts \(app.config.environments.joined(separator: ", ")))")
            }
            spelled.append(known)
        }
        return Array(Set(spelled)).sorted()
    }

    private static func schedule(_ delays: [Int64]?) throws(CoreError) -> [Int64]? {
        guard let delays else { return nil }
        do {
            return try RetrySchedule(seconds: delays).delays
        } catch {
            throw .invalidInput(field: "retrySchedule", error.message)
        }
    }

    static func encode<T: Encodable>(_ value: T) throws(CoreError) -> String {
        do {
            return String(decoding: try JSONEncoder.sortedKeys.encode(value), as: UTF8.self)
        } catch {
            throw .internalError("does not encode: \(error)")
        }
    }

    static func decode(_ config: String) throws(CoreError) -> [String: String] {
        do {
            return try JSONDecoder().decode([String: String].self, from: Data(config.utf8))
        } catch {
            throw .internalError("a stored integration configuration does not decode")
        }
    }
}
