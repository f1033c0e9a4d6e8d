import AppStore
import Foundation
import Hummingbird
import StorekeeperCore

/// The dashboard's page of Apple's refund requests: those waiting (with the time left in Apple's window and a form to
/// answer now), and those answered or not, with the rule that decided and Apple's decision.
struct DashboardRefundsController {
    let core: StorekeeperCore

    /// Under `apps/:appId`.
    var appRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("refund-requests", use: refundRequests)
        routes.post("refund-requests/:requestId/decision", use: decideRefundRequest)
        return routes
    }

    @Sendable func refundRequests(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let now = core.now
        let views = try await core.refundRequests.list(app: scope.app, environment: scope.environment)
        func row(_ view: RefundRequestView) -> RefundRequestsPage.Row {
            let open = view.status == "waiting" || view.status == "noConsent"
            let left = max(0, view.deadlineAt - now)
            return RefundRequestsPage.Row(
                id: view.id, customer: view.customerId,
                customerHref: DashboardPaths.link(
                    DashboardPaths.app(scope.app.id) + "/customers/" + DashboardPaths.pathEscaped(view.customerId),
                    [("environment", scope.environment.rawValue)]),
                product: view.productId, reason: view.reason ?? "–", requested: DashboardFormat.instant(view.requestedAt),
                timeLeft: open ? "\(left / 3_600_000) h \(left % 3_600_000 / 60_000) min" : "–",
                status: view.held ? "held until \(DashboardFormat.instant(view.dueAt))" : view.status,
                preference: view.preference ?? "none", decidedBy: view.decidedBy, note: view.note ?? view.lastError ?? "",
                outcome: view.outcome ?? "–",
                decideAction: open
                    ? DashboardPaths.link(
                        DashboardPaths.app(scope.app.id) + "/refund-requests/" + DashboardPaths.pathEscaped(view.id) + "/decision",
                        [("environment", scope.environment.rawValue)]) : nil)
        }
        let rows = views.map(row)
        let policy =
            scope.app.config.refundPolicy.map { policy in
                "\(policy.rules.count) rule\(policy.rules.count == 1 ? "" : "s"), default \(policy.defaultPreference?.rawValue ?? "no preference"), "
                    + "answers held \(policy.holdMinutes) min"
            } ?? "No refund policy: requests are recorded and not answered (PUT /v1/apps/{appId}/refund-policy)."
        return DashboardRender.page(
            "refundRequests",
            RefundRequestsPage(
                chrome: scope.chrome, policy: policy, pending: rows.filter { $0.decideAction != nil },
                answered: rows.filter { $0.decideAction == nil },
                preferences: RefundPreference.known.map(\.rawValue)))
    }

    struct DecisionForm: Decodable {
        var preference: String?
    }

    @Sendable func decideRefundRequest(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let id = try context.parameters.require("requestId")
        let form = try await DashboardForm.decode(DecisionForm.self, request)
        var preference: RefundPreference?
        if let given = form.preference, given != "none" {
            let known = RefundPreference(rawValue: given)
            guard known.isKnown else {
                throw CoreError.invalidInput(field: "preference", "DECLINE, GRANT_FULL, GRANT_PRORATED or none")
            }
            preference = known
        }
        _ = try await core.refundRequests.decide(id, preference: preference, by: scope.user.email, app: scope.app)
        return DashboardRedirect(
            location: DashboardPaths.link(
                DashboardPaths.app(scope.app.id) + "/refund-requests", [("environment", scope.environment.rawValue)])
        ).response
    }
}
