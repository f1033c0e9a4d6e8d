import AppStore
import Experiments
import Foundation
import Hummingbird
import StorekeeperCore

/// The dashboard's split-test pages: the list with a form for a new definition, and each experiment's results (a
/// table with intervals, the cumulative lift as a chart, the SRM warning, the recommendation), its definition editor
/// and the buttons that start, pause, resume, roll back or ship it. Every form carries the session's CSRF token;
/// every change is in the audit log with the person who made it.
struct DashboardExperimentsController {
    let core: StorekeeperCore

    /// Under `apps/:appId`.
    var appRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("experiments", use: experiments)
        routes.post("experiments", use: createExperiment)
        routes.get("experiments/:experimentKey", use: experiment)
        routes.post("experiments/:experimentKey/edit", use: editExperiment)
        routes.post("experiments/:experimentKey/status", use: experimentStatus)
        return routes
    }

    static let exampleDefinition = """
        {"key": "onboarding-paywall", "placement": "onboarding",
         "variants": [{"key": "control"}, {"key": "treatment", "paywall": "bold"}]}
        """

    @Sendable func experiments(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        return DashboardRender.page(
            "experiments", try await experimentsPage(scope, definition: Self.exampleDefinition)
        )
    }

    func experimentsPage(_ scope: DashboardScope, definition: String, error: String? = nil) async throws -> ExperimentsPage {
        let app = scope.app
        let environment = scope.environment
        let rows = try await core.experiments.experiments(app: app).map { view in
            ExperimentsPage.Row(
                key: view.definition.key,
                href: DashboardPaths.link(Self.experimentPath(app.id, view.definition.key), [("environment", environment.rawValue)]),
                placement: view.definition.placement ?? "", status: view.definition.status.rawValue, phase: view.definition.phase,
                updated: DashboardFormat.instant(view.updatedAt))
        }
        return ExperimentsPage(
            chrome: scope.chrome, experiments: rows,
            createAction: DashboardPaths.link(DashboardPaths.app(app.id) + "/experiments", [("environment", environment.rawValue)]),
            definition: definition,
            error: error)
    }

    struct DefinitionForm: Decodable {
        var definition: String?
    }

    /// Creates an experiment from the form's JSON; a refused definition shows the list again with the reason.
    @Sendable func createExperiment(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let form = try await DashboardForm.decode(DefinitionForm.self, request)
        let text = form.definition ?? ""
        do {
            let view = try await core.experiments.createExperiment(Data(text.utf8), app: scope.app, by: scope.user.email)
            return DashboardRedirect(
                location: DashboardPaths.link(
                    Self.experimentPath(scope.app.id, view.definition.key), [("environment", scope.environment.rawValue)])
            ).response
        } catch let error as CoreError {
            guard let message = Self.formError(error) else { throw error }
            let page = try await experimentsPage(scope, definition: text, error: message)
            return DashboardRender.page("experiments", page, status: Self.formStatus(error))
        }
    }

    @Sendable func experiment(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let key = try context.parameters.require("experimentKey")
        let window = request.uri.queryParameters.get("window") ?? String(ExperimentResultsReader.defaultWindowDays)
        return DashboardRender.page(
            "experiment", try await experimentPage(key, scope, window: window))
    }

    func experimentPage(
        _ key: String, _ scope: DashboardScope, window: String, editor: String? = nil, error: String? = nil
    ) async throws -> ExperimentPage {
        let app = scope.app
        let environment = scope.environment
        let view = try await core.experiments.experiment(key, app: app)
        let definition = view.definition
        let results = try await core.experimentResults.results(
            key, app: app, environment: environment, windowDays: try ExperimentResultsReader.window(window))
        let controlKey = definition.control?.key
        let metricsByKey = Dictionary(results.analysis.variants.map { ($0.key, $0.metrics) }, uniquingKeysWith: { first, _ in first })
        func metric(_ result: MetricResult?, money: Bool) -> ExperimentPage.Metric {
            guard let result else { return .init(value: "–", lift: "", interval: "", pValue: "", chance: "") }
            return .init(
                value: money ? DashboardFormat.money(result.value) : Self.percent(result.value, signed: false),
                lift: result.lift.map { Self.percent($0) } ?? (result.liftUndefinedReason == nil ? "" : "n/a"),
                interval: result.sequentialCi.flatMap { $0.count == 2 ? "\(Self.percent($0[0])) to \(Self.percent($0[1]))" : nil } ?? "",
                pValue: result.pValueAdjusted.map { String(format: "%.3g", $0) } ?? "",
                chance: result.chanceToBeatControl.map { Self.percent($0, signed: false) } ?? "")
        }
        let rows = results.arms.map { arm in
            ExperimentPage.Row(
                key: arm.key, control: arm.key == controlKey, controlCheck: arm.key == ExperimentDefinition.controlCheckKey,
                exposed: arm.exposed, trials: arm.trials, paid: arm.paid, gross: DashboardFormat.money(arm.grossUSD),
                proceeds: DashboardFormat.money(arm.proceedsUSD), unconverted: arm.unconvertedCustomers,
                paidMetric: metric(metricsByKey[arm.key]?["paid"], money: false),
                revenueMetric: metric(metricsByKey[arm.key]?["revenue"], money: true))
        }
        var actions: [ExperimentPage.Action] = []
        switch definition.status {
        case .draft: actions = [.init(label: "Start", field: "status", value: "running")]
        case .running:
            actions = [
                .init(label: "Pause", field: "status", value: "paused"), .init(label: "Roll back", field: "status", value: "rolledBack"),
            ]
        case .paused:
            actions = [
                .init(label: "Resume", field: "status", value: "running"), .init(label: "Roll back", field: "status", value: "rolledBack"),
            ]
        case .stopped, .rolledBack: break
        }
        if definition.status == .running || definition.status == .paused {
            for variant in definition.variants where variant.key != ExperimentDefinition.controlCheckKey {
                actions.append(.init(label: "Ship \(variant.key)", field: "winner", value: variant.key))
            }
        }
        let treatments = definition.variants.map(\.key).filter { $0 != controlKey }
        let charts = treatments.compactMap { variant -> ExperimentPage.Chart? in
            let points = results.cumulative.filter { $0.variant == variant }
            guard !points.isEmpty else { return nil }
            return ExperimentPage.Chart(
                svg: SVGChart(
                    id: "lift-\(variant)", title: "Cumulative lift of \(variant) in revenue per exposed customer",
                    labels: points.map { DashboardFormat.instant($0.day).prefix(10).description },
                    values: points.map { $0.revenueLift ?? .nan }, kind: .ratio
                ).svg)
        }
        let srm = results.analysis.srm
        return ExperimentPage(
            title: key, chrome: scope.chrome, key: key, status: definition.status.rawValue, phase: definition.phase,
            placement: definition.placement ?? "", started: definition.startedAt.map(DashboardFormat.instant) ?? "not started",
            definitionJSON: Self.prettyJSON(definition),
            editAction: DashboardPaths.link(Self.experimentPath(app.id, key) + "/edit", [("environment", environment.rawValue)]),
            statusAction: DashboardPaths.link(Self.experimentPath(app.id, key) + "/status", [("environment", environment.rawValue)]),
            editor: editor ?? Self.editableJSON(definition),
            actions: actions, finished: definition.status == .stopped || definition.status == .rolledBack, error: error,
            environment: environment.rawValue, window: window,
            windows: ["7", "14", "30", "90", "unbounded"].map { FormOption(name: $0, selected: $0 == window) }, rows: rows,
            srmAlarm: srm.alarm,
            srm: String(format: "χ² = %.2f, p = %.3g", srm.chiSquare, srm.pValue),
            recommendation: results.recommendation.summary, recommendationReason: results.recommendation.reason, charts: charts)
    }

    struct StatusForm: Decodable {
        var status: String?
        var winner: String?
    }

    /// Start, pause, resume, roll back or ship: a PATCH of the status or the winner.
    @Sendable func experimentStatus(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let key = try context.parameters.require("experimentKey")
        let form = try await DashboardForm.decode(StatusForm.self, request)
        var patch: [String: JSONValue] = [:]
        if let status = form.status { patch["status"] = .string(status) }
        if let winner = form.winner { patch["winner"] = .string(winner) }
        return try await applyPatch(
            key, body: try JSONEncoder().encode(JSONValue.object(patch)), editor: nil, scope: scope)
    }

    /// The definition editor: the JSON of the fields that change.
    @Sendable func editExperiment(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let key = try context.parameters.require("experimentKey")
        let form = try await DashboardForm.decode(DefinitionForm.self, request)
        let text = form.definition ?? ""
        return try await applyPatch(
            key, body: Data(text.utf8), editor: text, scope: scope)
    }

    private func applyPatch(_ key: String, body: Data, editor: String?, scope: DashboardScope) async throws -> Response {
        let app = scope.app
        let environment = scope.environment
        do {
            _ = try await core.experiments.patchExperiment(key, body, app: app, by: scope.user.email)
            return DashboardRedirect(
                location: DashboardPaths.link(Self.experimentPath(app.id, key), [("environment", environment.rawValue)])
            ).response
        } catch let error as CoreError {
            guard let message = Self.formError(error) else { throw error }
            let page = try await experimentPage(
                key, scope, window: String(ExperimentResultsReader.defaultWindowDays),
                editor: editor, error: message)
            return DashboardRender.page("experiment", page, status: Self.formStatus(error))
        }
    }

    /// A refusal the form shows beside what was typed (the rest is an error page).
    static func formError(_ error: CoreError) -> String? {
        switch error {
        case .invalidInput, .conflict: error.description
        default: nil
        }
    }

    static func formStatus(_ error: CoreError) -> HTTPResponse.Status {
        if case .conflict = error { return .conflict }
        return .badRequest
    }

    static func experimentPath(_ appId: String, _ key: String) -> String {
        DashboardPaths.app(appId) + "/experiments/" + DashboardPaths.pathEscaped(key)
    }

    /// A share as the dashboard writes it; a lift with its sign.
    static func percent(_ value: Double, signed: Bool = true) -> String {
        guard value.isFinite else { return "–" }
        return (signed && value >= 0 ? "+" : "") + DashboardFormat.percent(value)
    }

    static func prettyJSON(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// What the editor starts with: the fields a change may touch, as they are.
    static func editableJSON(_ definition: ExperimentDefinition) -> String {
        struct Editable: Encodable {
            var variants: [ExperimentDefinition.Variant]
            var coverage: Double
            var targeting: ExperimentDefinition.Targeting?
            var namespace: Namespace?
            var seed: String?
        }
        return prettyJSON(
            Editable(
                variants: definition.variants, coverage: definition.coverage, targeting: definition.targeting,
                namespace: definition.namespace,
                seed: definition.seed))
    }
}
