import Analytics
import AppStore
import Entitlements
import OpenAPIKit
import StorekeeperCore

/// The dashboard's pages: HTML for people, signed in with the `storekeeper_session` cookie. Every error is a page
/// with the status the API would answer (`ErrorResponse` decides both); without a session a page redirects (303) to
/// the sign-in page. The router's own 404 (no such path) stays the API's JSON.
extension OpenAPIDocument {
    static let sessionCookie = "storekeeper_session"

    /// A page.
    static func html(_ description: String) -> Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response> {
        .response(description: description, content: [.html: .content(.init(schema: .string))])
    }

    /// A redirect (303 See Other) to `Location`.
    static func seeOther(_ description: String) -> Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response> {
        .response(
            description: description,
            headers: ["Location": .b(.init(schema: .string, description: "Where to go: a dashboard path.", required: true))])
    }

    /// The error pages an operation can answer.
    static func errorPages(_ codes: Int...) -> Responses {
        var map = Responses()
        for code in codes {
            map[.status(code: code)] =
                code == 404
                // An id of another app, or a customer or fact there is none of, is a page; a path no route has is the
                // router's JSON.
                ? .response(
                    description: "Not found.",
                    content: [
                        .html: .content(.init(schema: .string)), .json: .content(.init(schema: .reference(.component(named: "Error")))),
                    ])
                : html("An error page: what went wrong, in words.")
        }
        return map
    }

    /// A signed-in page of an app: 200, the sign-in redirect, and its error pages (a bad parameter, an app the user
    /// may not see or a customer there is none of, the database).
    static func page(
        _ summary: String, parameters: OpenAPI.Parameter.Array = [],
        content: OpenAPI.Content.Map = [.html: .content(.init(schema: .string))],
        redirect: String = "No session (or its user is gone): to the sign-in page, which returns here afterwards."
    ) -> Either<OpenAPI.Reference<OpenAPI.PathItem>, OpenAPI.PathItem> {
        .b(
            .init(
                get: .init(
                    summary: summary, parameters: [parameter("AppId"), parameter("Environment")] + parameters,
                    responses: merged(
                        [200: .response(description: "The page.", content: content), 303: seeOther(redirect)], errorPages(400, 404, 503)),
                    security: [[.component(named: "dashboardSession"): []]])))
    }

    static func form(_ properties: OrderedDictionary<String, JSONSchema>) -> OpenAPI.Request {
        .init(content: [.form: .content(.init(schema: .object(properties: properties)))], required: true)
    }

    static let integrationPageParameter = Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter>.parameter(
        .init(name: "integrationId", context: .path(schema: .string(minLength: 1)), description: "The destination's id."))

    static var dashboardPaths: OpenAPI.PathItem.Map {
        let base = "/dashboard/apps/{appId}"
        let metricNames = Metric.allCases.flatMap { [AnyCodable($0.rawValue), AnyCodable($0.rawValue + ".csv")] }
        // The metric page's form sends every field, empty when not chosen: empty means "every" there.
        let day = JSONSchema.string(pattern: "^([0-9]{4}-[0-9]{2}-[0-9]{2})?$")
        return [
            "/dashboard/sign-in": .init(
                get: .init(
                    summary: "The sign-in form (a session cookie carries its CSRF token).",
                    parameters: [query("next", .string, "A dashboard path to return to after signing in.")],
                    responses: [
                        200: html("The sign-in form."),
                        303: seeOther("Already signed in: to next (or the dashboard)."),
                    ],
                    security: []),
                post: .init(
                    summary: "Signs in; five wrong passwords within a minute lock the account for a minute.",
                    requestBody: form([
                        "email": .string, "password": .string, "csrf": .string(description: "The sign-in page's token."),
                        "next": .string(required: false),
                    ]),
                    responses: merged(
                        [
                            303: seeOther("Signed in (a new session cookie): to next or the dashboard."),
                            401: html("Wrong email or password, said so on the form."),
                            403: html("The form's token is not this session's (an expired form, or another site's)."),
                            429: .response(
                                description: "The account is locked: the form says for how long.",
                                headers: ["Retry-After": .b(.init(schema: .string, description: "Seconds.", required: true))],
                                content: [.html: .content(.init(schema: .string))]),
                        ], errorPages(400, 413, 503)),
                    security: [])),
            "/dashboard/sign-out": .init(
                post: .init(
                    summary: "Signs out (ends the session); the form carries the session's CSRF token.",
                    requestBody: form(["csrf": .string]),
                    responses: merged(
                        [303: seeOther("To the sign-in page (also without a session).")], errorPages(400, 403, 413, 503)),
                    security: [[.component(named: "dashboardSession"): []]])),
            "/dashboard": .init(
                get: .init(
                    summary: "The apps the signed-in user may see.",
                    responses: merged(
                        [
                            200: html("The list of apps."),
                            303: seeOther("No session: to the sign-in page; a user who may see one app: to its overview."),
                        ], errorPages(503)),
                    security: [[.component(named: "dashboardSession"): []]])),
            OpenAPI.Path(rawValue: base): page(
                "The overview: the headline numbers and the last 90 days of MRR, actives, trials and revenue."),
            OpenAPI.Path(rawValue: base + "/metrics/{metric}"): page(
                "One metric with its controls and table; with .csv, the API's CSV.",
                parameters: [
                    .parameter(
                        .init(
                            name: "metric", context: .path(schema: .string(allowedValues: metricNames)),
                            description: "The metric; with .csv, the CSV download.")),
                    query("from", day, "The first day (empty: 30 days before to)."),
                    query("to", day, "The day after the last (empty: tomorrow)."),
                    query("interval", .string(allowedValues: "", "day", "week", "month"), "day (default), week or month."),
                    query("product", .string, "Only this product (empty: every product)."),
                    query("group", .string, "Only this subscription group (empty: every group)."),
                    query("storefront", .string, "Only this storefront (empty: every storefront)."),
                    query("tz", .string, "An IANA time zone (empty: UTC)."),
                    query("window", .string(pattern: "^([0-9]{1,3})?$"), "Trial conversion: days after a trial's end."),
                    query(
                        "excludeRefunded", .string(allowedValues: "", "true", "false"), "Trial conversion: leave out refunded conversions."),
                ],
                content: [.html: .content(.init(schema: .string)), .csv: .content(.init(schema: .string))]),
            OpenAPI.Path(rawValue: base + "/trials"): page(
                "The free-trials report and the trial-conversion cohorts of the last twelve months."),
            OpenAPI.Path(rawValue: base + "/customers"): page(
                "The app's customers, newest first (status, product, spend net of refunds, last purchase), 50 a page, by status; "
                    + "and the search by customer id, app user id, alias, original transaction id or transaction id.",
                parameters: [
                    query("q", .string, "What to look for."),
                    query("status", .string(allowedValues: "", "new", "active", "inactive"), "Only customers of this status (empty: all)."),
                    query("after", .string(pattern: "^[0-9]{1,18}:.+$"), "The previous page's last customer (the Older link)."),
                ],
                redirect: "To the one customer the search found; without a session, to the sign-in page."),
            OpenAPI.Path(rawValue: base + "/customers/{customerId}"): page(
                "A customer: state, entitlements, subscriptions and a timeline with the raw signed data one click away.",
                parameters: [
                    .parameter(.init(name: "customerId", context: .path(schema: .string(minLength: 1)), description: "The customer's id."))
                ]),
            OpenAPI.Path(rawValue: base + "/raw/{factId}"): page(
                "A transaction's stored versions or a notification: decoded, and as Apple signed it.",
                parameters: [
                    .parameter(
                        .init(
                            name: "factId", context: .path(schema: .string(minLength: 1)),
                            description: "A transaction id or a notification UUID."))
                ]),
            OpenAPI.Path(rawValue: base + "/events"): page(
                "The app's events, latest first.",
                parameters: [
                    query(
                        "type", .string(allowedValues: [""] + SubscriptionEventType.allCases.map { AnyCodable($0.rawValue) }),
                        "Only this event type (empty: every type)."),
                    query("before", .string(pattern: "^[1-9][0-9]{0,17}$"), "Older than this event number (the Older link)."),
                ]),
            OpenAPI.Path(rawValue: base + "/integrations"): page("The app's event destinations, with what waits and what died."),
            OpenAPI.Path(rawValue: base + "/integrations/{integrationId}"): page(
                "A destination: its configuration (no secret), counts by status, failures, recent deliveries and a replay form.",
                parameters: [integrationPageParameter, query("replayed", .string, "How many the last replay sent again (shown).")]),
            OpenAPI.Path(rawValue: base + "/integrations/{integrationId}/replay"): .init(
                post: .init(
                    summary: "Replays the destination's deliveries created between two days, dead ones or all (same ids).",
                    parameters: [parameter("AppId"), integrationPageParameter],
                    requestBody: form([
                        "csrf": .string, "from": .string(description: "YYYY-MM-DD"), "to": .string(description: "YYYY-MM-DD, excluded"),
                        "status": .string(required: false, allowedValues: "dead", "all"),
                    ]),
                    responses: merged(
                        [303: seeOther("Back to the destination's page, saying how many were replayed; without a session, to sign-in.")],
                        errorPages(400, 403, 404, 413, 503)),
                    security: [[.component(named: "dashboardSession"): []]])),
            OpenAPI.Path(rawValue: base + "/refund-requests"): page(
                "Apple's refund requests: those waiting (time left, a form to answer now) and those answered, with what decided."),
            OpenAPI.Path(rawValue: base + "/refund-requests/{requestId}/decision"): .init(
                post: .init(
                    summary: "A person's answer to a waiting refund request, sent at once (with the customer's consent).",
                    parameters: [
                        parameter("AppId"),
                        .parameter(
                            .init(name: "requestId", context: .path(schema: .string(minLength: 1)), description: "The request's id.")),
                    ],
                    requestBody: form([
                        "csrf": .string,
                        "preference": .string(allowedValues: RefundPreference.known.map { .init($0.rawValue) } + ["none"]),
                    ]),
                    responses: merged(
                        [303: seeOther("Back to the refund requests; without a session, to sign-in.")],
                        errorPages(400, 403, 404, 409, 413, 503)),
                    security: [[.component(named: "dashboardSession"): []]])),
            OpenAPI.Path(rawValue: base + "/experiments"): .init(
                get: page("The app's split tests, and a form for a new one.").b?.get,
                post: experimentForm(
                    "Creates an experiment from the form's JSON definition; a refused one shows the form again with the reason.",
                    ["csrf": .string, "definition": .string(description: "The definition, JSON.")], parameters: [])),
            OpenAPI.Path(rawValue: base + "/experiments/{experimentKey}"): page(
                "An experiment: results with intervals, the cumulative lift, the SRM warning, the recommendation, its buttons and editor.",
                parameters: [
                    experimentPageParameter,
                    query("window", .string(pattern: "^(unbounded|[1-9][0-9]{0,3})$"), "Days after the first exposure (default 14)."),
                ]),
            OpenAPI.Path(rawValue: base + "/experiments/{experimentKey}/edit"): .init(
                post: experimentForm(
                    "Changes the definition with the form's JSON (the fields that change); a refusal shows the page again with the reason.",
                    ["csrf": .string, "definition": .string(description: "JSON of the fields that change.")])),
            OpenAPI.Path(rawValue: base + "/experiments/{experimentKey}/status"): .init(
                post: experimentForm(
                    "Starts, pauses, resumes, rolls back (status) or ships a variant to everyone (winner).",
                    [
                        "csrf": .string, "status": .string(required: false, allowedValues: "running", "paused", "rolledBack"),
                        "winner": .string(required: false),
                    ])),
        ]
    }

    static let experimentPageParameter = Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter>.parameter(
        .init(name: "experimentKey", context: .path(schema: .string(minLength: 1)), description: "The experiment's key."))

    /// A form of the experiment pages: 303 to the experiment's page when it is done; the page again (400, 409) with the
    /// reason when the definition or the change is refused.
    static func experimentForm(
        _ summary: String, _ fields: OrderedDictionary<String, JSONSchema>,
        parameters: OpenAPI.Parameter.Array = [experimentPageParameter]
    ) -> OpenAPI.Operation {
        .init(
            summary: summary, parameters: [parameter("AppId"), parameter("Environment")] + parameters, requestBody: form(fields),
            responses: merged(
                [303: seeOther("To the experiment's page; without a session, to sign-in.")],
                errorPages(400, 403, 404, 409, 413, 503)),
            security: [[.component(named: "dashboardSession"): []]])
    }
}
