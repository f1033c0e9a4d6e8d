import Hummingbird
import StorekeeperCore

/// `POST /v1/apps/{appId}/notifications/appstore`: Apple's App Store Server Notifications V2. No key: the signature is
/// the proof.
struct WebhookController {
    let core: StorekeeperCore

    struct SignedPayloadBody: Decodable { var signedPayload: String }
    struct NotificationAnswer: ResponseCodable { var result: NotificationOutcome }

    var routes: RouteCollection<ServerContext> {
        let routes = RouteCollection(context: ServerContext.self)
        routes.post("/v1/apps/:appId/notifications/appstore", use: notification)
        return routes
    }

    @Sendable func notification(_ request: Request, context: ServerContext) async throws -> NotificationAnswer {
        // An unknown app is 404 before the body is read.
        let app = try await core.apps.app(id: context.parameters.get("appId") ?? "")
        let body = try await request.decode(as: SignedPayloadBody.self, context: context)
        return NotificationAnswer(result: try await core.notifications.ingest(body.signedPayload, app: app))
    }
}

extension NotificationOutcome: Codable {}
