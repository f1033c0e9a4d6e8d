import Analytics
import Foundation
import Hummingbird
import StorekeeperCore

/// The dashboard's pages of an app's event destinations: the list, and each one's recent deliveries, failures and a
/// replay form.
struct DashboardIntegrationsController {
    let core: StorekeeperCore

    /// Under `apps/:appId`.
    var appRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("integrations", use: integrations)
        routes.get("integrations/:integrationId", use: integration)
        routes.post("integrations/:integrationId/replay", use: replay)
        return routes
    }

    @Sendable func integrations(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        var rows: [IntegrationsPage.Row] = []
        for view in try await core.integrations.list(app: scope.app) {
            let counts = try await core.integrations.counts(view.id, app: scope.app)
            rows.append(
                .init(
                    name: view.name, kind: view.kind,
                    href: DashboardPaths.link(Self.integrationPath(scope.app.id, view.id), [("environment", scope.environment.rawValue)]),
                    state: view.enabled ? "enabled" : "disabled", disabledReason: view.disabledReason,
                    waiting: (counts["pending"] ?? 0) + (counts["retrying"] ?? 0), dead: counts["dead"] ?? 0))
        }
        return DashboardRender.page("integrations", IntegrationsPage(chrome: scope.chrome, integrations: rows))
    }

    static let deliveriesShown = 50

    @Sendable func integration(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let id = try context.parameters.require("integrationId")
        let view = try await core.integrations.get(id, app: scope.app)
        let counts = try await core.integrations.counts(id, app: scope.app)
        func rows(_ status: String?) async throws -> [IntegrationPage.Row] {
            try await core.integrations.deliveries(id, app: scope.app, status: status, after: nil, limit: Self.deliveriesShown).deliveries
                .map {
                    IntegrationPage.Row(
                        id: $0.id, eventId: $0.eventId, status: $0.status, attempts: $0.attempts,
                        updated: DashboardFormat.instant($0.updatedAt),
                        next: $0.nextAttemptAt.map(DashboardFormat.instant) ?? "–",
                        answer: [
                            $0.lastStatus.map(String.init), $0.lastLatencyMs.map { "\($0) ms" },
                            $0.lastResponse.map { String($0.prefix(200)) },
                        ]
                        .compactMap { $0 }.joined(separator: " · "),
                        error: $0.lastError ?? "", retraction: $0.retraction)
                }
        }
        let now = core.now
        let page = IntegrationPage(
            title: view.name, chrome: scope.chrome, name: view.name, kind: view.kind,
            config: view.config.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: $0.value) },
            secrets: view.secretsConfigured.isEmpty ? "none" : view.secretsConfigured.joined(separator: ", "), enabled: view.enabled,
            disabledReason: view.disabledReason,
            counts: ["pending", "retrying", "delivered", "dead"].map { .init(key: $0, value: counts[$0] ?? 0) },
            recent: try await rows(nil), failures: try await rows("dead") + (try await rows("retrying")),
            replayAction: Self.integrationPath(scope.app.id, id) + "/replay",
            from: CalendarDay(containing: now - 7 * 86_400_000).description, to: CalendarDay(containing: now + 86_400_000).description,
            replayed: request.uri.queryParameters.get("replayed").flatMap { Int($0) }.map { "\($0) deliveries will be sent again." })
        return DashboardRender.page("integration", page)
    }

    struct ReplayForm: Decodable {
        var from: String?
        var to: String?
        var status: String?
    }

    /// Replays the deliveries created between two days (UTC, the second excluded), dead ones or all, then shows the
    /// destination again with how many.
    @Sendable func replay(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let id = try context.parameters.require("integrationId")
        let form = try await DashboardForm.decode(ReplayForm.self, request)
        guard let from = form.from.flatMap({ CalendarDay($0) }) else {
            throw CoreError.invalidInput(field: "from", "from is a day, YYYY-MM-DD")
        }
        guard let to = form.to.flatMap({ CalendarDay($0) }) else {
            throw CoreError.invalidInput(field: "to", "to is a day, YYYY-MM-DD")
        }
        let replayed = try await core.integrations.replay(
            id, app: scope.app, from: from.daysSinceEpoch * 86_400_000, to: to.daysSinceEpoch * 86_400_000, status: form.status ?? "dead")
        return DashboardRedirect(
            location: DashboardPaths.link(
                Self.integrationPath(scope.app.id, id), [("environment", scope.environment.rawValue), ("replayed", String(replayed))])
        ).response
    }

    static func integrationPath(_ appId: String, _ id: String) -> String {
        DashboardPaths.app(appId) + "/integrations/" + DashboardPaths.pathEscaped(id)
    }
}
