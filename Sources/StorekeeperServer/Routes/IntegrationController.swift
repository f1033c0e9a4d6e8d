import Foundation
import Hummingbird
import StorekeeperCore

/// `/v1/apps/{appId}/integrations[/{integrationId}…]` with a secret key of the app: the destinations of its events
/// and their deliveries.
struct IntegrationController {
    let core: StorekeeperCore
    var integrations: IntegrationAdministration { core.integrations }

    var routes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.post("integrations", use: create)
        routes.get("integrations", use: list)
        routes.get("integrations/:integrationId", use: get)
        routes.patch("integrations/:integrationId", use: update)
        routes.delete("integrations/:integrationId", use: delete)
        routes.post("integrations/:integrationId/test", use: test)
        routes.post("integrations/:integrationId/secret/rotate", use: rotateSecret)
        routes.get("integrations/:integrationId/deliveries", use: deliveries)
        routes.post("integrations/:integrationId/deliveries/:deliveryId/retry", use: retry)
        routes.post("integrations/:integrationId/replay", use: replay)
        return routes
    }

    @Sendable func create(_ request: Request, context: AdminContext) async throws -> EditedResponse<IntegrationView> {
        let body = try await request.decode(as: IntegrationBody.self, context: context)
        return EditedResponse(status: .created, response: try await integrations.create(body.input, app: context.app))
    }

    struct IntegrationList: ResponseCodable { var integrations: [IntegrationView] }

    @Sendable func list(_ request: Request, context: AdminContext) async throws -> IntegrationList {
        IntegrationList(integrations: try await integrations.list(app: context.app))
    }

    @Sendable func get(_ request: Request, context: AdminContext) async throws -> IntegrationView {
        try await integrations.get(try Self.id(context), app: context.app)
    }

    @Sendable func update(_ request: Request, context: AdminContext) async throws -> IntegrationView {
        let body = try await request.decode(as: IntegrationBody.self, context: context)
        return try await integrations.update(try Self.id(context), with: body.input, app: context.app)
    }

    @Sendable func delete(_ request: Request, context: AdminContext) async throws -> Response {
        try await integrations.delete(try Self.id(context), app: context.app)
        return Response(status: .noContent)
    }

    @Sendable func test(_ request: Request, context: AdminContext) async throws -> TestResult {
        try await integrations.test(try Self.id(context), app: context.app)
    }

    @Sendable func rotateSecret(_ request: Request, context: AdminContext) async throws -> IntegrationView {
        try await integrations.rotateSecret(try Self.id(context), app: context.app)
    }

    @Sendable func deliveries(_ request: Request, context: AdminContext) async throws -> DeliveryPage {
        let parameters = request.uri.queryParameters
        var limit: Int?
        if let text = parameters.get("limit") {
            guard let value = Int(text) else { throw CoreError.invalidInput(field: "limit", "limit is a whole number") }
            limit = value
        }
        return try await integrations.deliveries(
            try Self.id(context), app: context.app, status: parameters.get("status"), after: parameters.get("after"), limit: limit)
    }

    @Sendable func retry(_ request: Request, context: AdminContext) async throws -> DeliveryView {
        let deliveryId = try context.parameters.require("deliveryId")
        return try await integrations.retry(try Self.id(context), delivery: deliveryId, app: context.app)
    }

    struct ReplayBody: Decodable {
        var from: Int64
        var to: Int64
        var status: String?
    }

    struct Replayed: ResponseCodable { var replayed: Int }

    @Sendable func replay(_ request: Request, context: AdminContext) async throws -> Replayed {
        let body = try await request.decode(as: ReplayBody.self, context: context)
        return Replayed(
            replayed: try await integrations.replay(
                try Self.id(context), app: context.app, from: body.from, to: body.to, status: body.status ?? "dead"))
    }

    private static func id(_ context: AdminContext) throws -> String { try context.parameters.require("integrationId") }
}

/// The body of POST and PATCH: every field optional here (the use case says which a creation needs), null only where
/// it removes (`events`, `retrySchedule`, a config value); an unknown field is refused rather than ignored. `config`
/// values are strings (a number, such as a Telegram chat id, is taken as its digits), or null to remove an optional
/// field in a change.
struct IntegrationBody: Decodable {
    var input = IntegrationInput()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, name, config, events, environments, enabled, retrySchedule
    }

    /// A configuration value: a string, or an integer taken as its digits.
    struct ConfigValue: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let integer = try? c.decode(Int64.self) {
                text = String(integer)
            } else {
                text = try c.decode(String.self)
            }
        }
    }

    init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, CodingKeys.self, what: "an integration")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        input.kind = try c.decodeUnlessAbsent(String.self, forKey: .kind)
        input.name = try c.decodeUnlessAbsent(String.self, forKey: .name)
        if let config = try c.decodeUnlessAbsent([String: ConfigValue?].self, forKey: .config) {
            input.config = config.mapValues { $0?.text }
        }
        if c.contains(.events) {
            input.events = .some(try c.decodeNil(forKey: .events) ? nil : try c.decode([String].self, forKey: .events))
        }
        input.environments = try c.decodeUnlessAbsent([String].self, forKey: .environments)
        input.enabled = try c.decodeUnlessAbsent(Bool.self, forKey: .enabled)
        if c.contains(.retrySchedule) {
            input.retrySchedule = .some(try c.decodeNil(forKey: .retrySchedule) ? nil : try c.decode([Int64].self, forKey: .retrySchedule))
        }
    }
}

extension IntegrationView: ResponseEncodable {}
extension DeliveryPage: ResponseEncodable {}
extension DeliveryView: ResponseEncodable {}
extension TestResult: ResponseEncodable {}
