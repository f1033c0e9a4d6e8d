import Analytics
import Foundation
import Hummingbird
import StorekeeperCore

/// The dashboard's pages of an app's event destinations: the list, and each one's recent deliveries, failures and a
/// replay form.
extension DashboardController {
    struct IntegrationsPage {
        struct Row {
            var name: String
            var kind: String
            var href: String
            var state: String
            var disabledReason: String?
            var waiting: Int
            var dead: Int
        }
        var title = "Integrations"
        var chrome: DashboardChrome
        var integrations: [Row]
    }

    @Sendable func integrations(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        var rows: [IntegrationsPage.Row] = []
        for view in try await core.integrations.list(app: app) {
            let counts = try await core.integrations.counts(view.id, app: app)
            rows.append(
                .init(
                    name: view.name, kind: view.kind,
                    href: DashboardPaths.link(Self.integrationPath(app.id, view.id), [("environment", environment.rawValue)]),
                    state: view.enabled ? "enabled" : "disabled", disabledReason: view.disabledReason,
                    waiting: (counts["pending"] ?? 0) + (counts["retrying"] ?? 0), dead: counts["dead"] ?? 0))
        }
        return DashboardRender.page("integrations", IntegrationsPage(chrome: chrome, integrations: rows))
    }

    struct IntegrationPage {
        struct Row {
            var id: String
            var eventId: String
            var status: String
            var attempts: Int
            var updated: String
            var next: String
            var answer: String
            var error: String
            var retraction: Bool
        }
        var title: String
        var chrome: DashboardChrome
        var name: String
        var kind: String
        var config: [(key: String, value: String)]
        var secrets: String
        var enabled: Bool
        var disabledReason: String?
        var counts: [(key: String, value: Int)]
        var recent: [Row]
        var failures: [Row]
        var replayAction: String
        var from: String
        var to: String
        var replayed: String?
    }

    static let deliveriesShown = 50

    @Sendable func integration(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, _, chrome) = try await scope(request, context)
        let id = try context.parameters.require("integrationId")
        let view = try await core.integrations.get(id, app: app)
        let counts = try await core.integrations.counts(id, app: app)
        func rows(_ status: String?) async throws -> [IntegrationPage.Row] {
            try await core.integrations.deliveries(id, app: app, status: status, after: nil, limit: Self.deliveriesShown).deliveries.map {
                IntegrationPage.Row(
                    id: $0.id, eventId: $0.eventId, status: $0.status, attempts: $0.attempts,
                    updated: DashboardFormat.instant($0.updatedAt),
                    next: $0.nextAttemptAt.map(DashboardFormat.instant) ?? "–",
                    answer: [
                        $0.lastStatus.map(String.init), $0.lastLatencyMs.map { "\($0) ms" }, $0.lastResponse.map { String($0.prefix(200)) },
                    ]
                    .compactMap { $0 }.joined(separator: " · "),
                    error: $0.lastError ?? "", retraction: $0.retraction)
            }
        }
        let now = core.now
        let page = IntegrationPage(
            title: view.name, chrome: chrome, name: view.name, kind: view.kind, config: view.config.sorted { $0.key < $1.key },
            secrets: view.secretsConfigured.isEmpty ? "none" : view.secretsConfigured.joined(separator: ", "), enabled: view.enabled,
            disabledReason: view.disabledReason,
            counts: ["pending", "retrying", "delivered", "dead"].map { ($0, counts[$0] ?? 0) },
            recent: try await rows(nil), failures: try await rows("dead") + (try await rows("retrying")),
            replayAction: Self.integrationPath(app.id, id) + "/replay",
            from: CalendarDay(containing: now - 7 * 86_400_000).description, to: CalendarDay(containing: now + 86_400_000).description,
            replayed: request.uri.queryParameters.get("replayed").flatMap { Int($0) }.map { "\($0) deliveries will be sent again." })
        return DashboardRender.page("integration", page)
    }

    struct ReplayForm: Decodable {
        var csrf: String?
        var from: String?
        var to: String?
        var status: String?
    }

    /// Replays the deliveries created between two days (UTC, the second excluded), dead ones or all, then shows the
    /// destination again with how many.
    @Sendable func replay(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, _) = try await scope(request, context)
        let id = try context.parameters.require("integrationId")
        let form = try await Self.form(ReplayForm.self, request, context)
        try Self.checkCSRF(form.csrf, context)
        guard let from = form.from.flatMap({ CalendarDay($0) }) else {
            throw CoreError.invalidInput(field: "from", "from is a day, YYYY-MM-DD")
        }
        guard let to = form.to.flatMap({ CalendarDay($0) }) else {
            throw CoreError.invalidInput(field: "to", "to is a day, YYYY-MM-DD")
        }
        let replayed = try await core.integrations.replay(
            id, app: app, from: from.daysSinceEpoch * 86_400_000, to: to.daysSinceEpoch * 86_400_000, status: form.status ?? "dead")
        return DashboardRedirect(
            location: DashboardPaths.link(
                Self.integrationPath(app.id, id), [("environment", environment.rawValue), ("replayed", String(replayed))])
        ).response
    }

    static func integrationPath(_ appId: String, _ id: String) -> String {
        DashboardPaths.app(appId) + "/integrations/" + DashboardPaths.pathEscaped(id)
    }
}
