import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// The dashboard: sign-in with bcrypt and database sessions, CSRF tokens, who sees which app, and pages
/// whose numbers are the API's. (The browser test in `.ci/browser_test.py` drives the same pages in Chromium.)
@Suite("Dashboard")
struct DashboardTests {
    static let password = "correct horse battery"

    /// A user of the harness's app (bcrypt's lowest cost: the tests check the flow, not the hash's strength).
    static func user(_ h: Harness, email: String = "ops@example.com", apps: [String]? = nil) async throws -> DashboardUser {
        try await h.core.dashboardAccounts.create(
            email: email, password: password, apps: apps ?? [h.app.appId], allApps: false, cost: 4
        ).user
    }

    /// The dashboard's cookies an answer sets (the session's, the sign-in form's), as a `Cookie` header value.
    static func cookie(_ response: TestResponse) -> String? {
        let pairs = response.headers[values: .setCookie]
            .filter { $0.hasPrefix("storekeeper_session=") || $0.hasPrefix("storekeeper_signin=") }
            .map { String($0.prefix { $0 != ";" }) }
        return pairs.isEmpty ? nil : pairs.joined(separator: "; ")
    }

    static func csrf(_ html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func form(_ fields: [(String, String)], cookie: String?) -> (HTTPFields, ByteBuffer) {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let cookie { headers[.cookie] = cookie }
        let text = fields.map { "\($0.0)=\(DashboardPaths.queryEscaped($0.1))" }.joined(separator: "&")
        return (headers, ByteBuffer(string: text))
    }

    /// Opens the sign-in page and posts the form; returns the answer and the cookie to use afterwards.
    static func signIn(_ client: some TestClientProtocol, email: String, password: String, next: String = "/dashboard") async throws
        -> (response: TestResponse, cookie: String?)
    {
        let page = try await client.execute(uri: "/dashboard/sign-in", method: .get)
        let formCookie = cookie(page)
        let (headers, body) = form(
            [("email", email), ("password", password), ("csrf", csrf(String(buffer: page.body)) ?? ""), ("next", next)], cookie: formCookie)
        let response = try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: headers, body: body)
        return (response, cookie(response) ?? formCookie)
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, cookie: String?) async throws -> TestResponse {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        return try await client.execute(uri: uri, method: .get, headers: headers)
    }

    @Test(
        "sign-in: a wrong password is 401; the right one sets an HttpOnly, SameSite=Strict cookie; sign-out ends it",
        arguments: TestDatabase.available)
    func signInAndOut(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await Self.user(h)
        try await h.application().test(.router) { base in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            let anonymous = try await Self.get(client, "/dashboard/apps/\(h.app.appId)", cookie: nil)
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location] == "/dashboard/sign-in?next=%2Fdashboard%2Fapps%2F\(h.app.appId)")

            let wrong = try await Self.signIn(client, email: "ops@example.com", password: "not the password")
            #expect(wrong.response.status == .unauthorized)
            #expect(String(buffer: wrong.response.body).contains("Wrong email or password."))
            let unknown = try await Self.signIn(client, email: "nobody@example.com", password: Self.password)
            #expect(unknown.response.status == .unauthorized)

            let (signedIn, cookie) = try await Self.signIn(
                client, email: "OPS@example.com", password: Self.password, next: "/dashboard/apps/\(h.app.appId)")
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/dashboard/apps/\(h.app.appId)")
            let setCookie = signedIn.headers[values: .setCookie].joined(separator: "; ")
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/dashboard"))
            #expect(!setCookie.contains("Secure"))
            let overview = try await Self.get(client, "/dashboard/apps/\(h.app.appId)", cookie: cookie)
            #expect(overview.status == .ok)
            let html = String(buffer: overview.body)
            #expect(html.contains("title=\"Signed in as ops@example.com\">Sign out"))
            #expect(html.contains("Sandbox data"))
            #expect(overview.headers[values: .contentSecurityPolicy].first?.contains("default-src 'none'") == true)

            // Sign-out needs the session's token; then the cookie opens nothing.
            let (badHeaders, badBody) = Self.form([("csrf", "0")], cookie: cookie)
            #expect(
                try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: badHeaders, body: badBody).status == .forbidden
            )
            let (headers, body) = Self.form([("csrf", Self.csrf(html) ?? "")], cookie: cookie)
            let out = try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: headers, body: body)
            #expect(out.status == .seeOther)
            #expect(try await Self.get(client, "/dashboard/apps/\(h.app.appId)", cookie: cookie).status == .seeOther)
        }
        await h.close()
    }

    @Test("a sign-in posted without the sign-in page's token (another site's form) is refused", arguments: [TestDatabase.sqlite])
    func csrfOnSignIn(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await Self.user(h)
        try await h.application().test(.router) { base in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            let page = try await client.execute(uri: "/dashboard/sign-in", method: .get)
            let (headers, body) = Self.form(
                [("email", "ops@example.com"), ("password", Self.password), ("csrf", "f00")], cookie: Self.cookie(page))
            let forged = try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: headers, body: body)
            #expect(forged.status == .forbidden)
            let (bigHeaders, bigBody) = Self.form([("email", String(repeating: "a", count: 20_000))], cookie: Self.cookie(page))
            let big = try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: bigHeaders, body: bigBody)
            #expect(big.status == .contentTooLarge)
            #expect(String(buffer: big.body).contains("a form is at most 16 KB"))
            let (noSession, noSessionBody) = Self.form(
                [("email", "ops@example.com"), ("password", Self.password), ("csrf", "")], cookie: nil)
            #expect(
                try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: noSession, body: noSessionBody).status
                    == .forbidden)
        }
        await h.close()
    }

    @Test("accounts: emails are checked and unique, passwords 12 to 72 bytes, apps must exist")
    func accountRules() async throws {
        let h = try await Harness.make(.sqlite)
        let accounts = h.core.dashboardAccounts
        let generated = try await accounts.create(email: "all@example.com", password: nil, apps: [], allApps: true, cost: 4)
        #expect(generated.generatedPassword?.count == 20)
        #expect(generated.user.canSee(app: "anything"))
        await #expect(throws: CoreError.self) {
            try await accounts.create(email: "ALL@example.com", password: Self.password, apps: [], allApps: true, cost: 4)
        }
        for email in ["no-at-sign", "a@b", "two@@example.com", "sp ace@example.com"] {
            await #expect(throws: CoreError.self, "\(email)") {
                try await accounts.create(email: email, password: Self.password, apps: [h.app.appId], allApps: false, cost: 4)
            }
        }
        for password in ["short", String(repeating: "x", count: 73)] {
            await #expect(throws: CoreError.self) {
                try await accounts.create(email: "p@example.com", password: password, apps: [h.app.appId], allApps: false, cost: 4)
            }
        }
        await #expect(throws: CoreError.self) {
            try await accounts.create(email: "p@example.com", password: Self.password, apps: ["app_missing"], allApps: false, cost: 4)
        }
        await #expect(throws: CoreError.self) {
            try await accounts.create(email: "p@example.com", password: Self.password, apps: [], allApps: false, cost: 4)
        }
        // The stored hash is bcrypt's, never the password.
        let stored = try await h.core.database.reading { try await $0.dashboardUser(email: "all@example.com") }
        #expect(stored?.passwordHash.hasPrefix("$2b$04$") == true)
        #expect(stored?.passwordHash.contains(generated.generatedPassword ?? "?") == false)
        await h.close()
    }

    @Test("a user sees only their apps: another app's pages read as absent", arguments: [TestDatabase.sqlite])
    func onlyTheirApps(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        let other = try await h.core.administration.create(Harness.config(bundle: "com.example.other"))
        _ = try await Self.user(h)
        try await h.application().test(.router) { base in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            let (_, cookie) = try await Self.signIn(client, email: "ops@example.com", password: Self.password)
            // One app: the list is its overview.
            let list = try await Self.get(client, "/dashboard", cookie: cookie)
            #expect(list.status == .seeOther && list.headers[.location] == "/dashboard/apps/\(h.app.appId)")
            for path in ["", "/metrics/mrr", "/customers", "/events", "/trials"] {
                let response = try await Self.get(client, "/dashboard/apps/\(other.appId)\(path)", cookie: cookie)
                #expect(response.status == .notFound, "\(path)")
                #expect(!String(buffer: response.body).contains("com.example.other"))
            }
            // Two apps: both listed. The one without customers yet says what to do first: where Apple's notifications go.
            _ = try await h.core.dashboardAccounts.create(
                email: "both@example.com", password: Self.password, apps: [h.app.appId, other.appId], allApps: false, cost: 4)
            let (_, both) = try await Self.signIn(client, email: "both@example.com", password: Self.password)
            let apps = try await Self.get(client, "/dashboard", cookie: both)
            #expect(apps.status == .ok)
            #expect(String(buffer: apps.body).contains(h.app.appId) && String(buffer: apps.body).contains(other.appId))
            let fresh = String(buffer: try await Self.get(client, "/dashboard/apps/\(other.appId)", cookie: both).body)
            #expect(fresh.contains(#"id="first-steps""#))
            #expect(fresh.contains("/v1/apps/\(other.appId)/notifications/appstore</code>"))
        }
        await h.close()
    }

    @Test(
        "every page renders; the overview's figures and a series' table are the API's numbers; CSV is the API's CSV",
        arguments: TestDatabase.available)
    func pagesShowTheAPIsNumbers(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await Self.user(h)
        h.clock.set(at(40))
        let purchase = Purchase(transactionId: "700", originalTransactionId: "700", purchase: at(35), expires: at(65), signed: at(35))
        let signed = try purchase.signed()
        try await h.application().test(.router) { base in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            let posted = try await client.execute(
                uri: "/v1/customers/alice/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": signed]))
            #expect(posted.status == .ok)
            let (_, cookie) = try await Self.signIn(client, email: "ops@example.com", password: Self.password)
            let base = "/dashboard/apps/\(h.app.appId)"
            let key = headers(h.app.secretKey)

            let overview = String(buffer: try await Self.get(client, base, cookie: cookie).body)
            let api = try decode(
                MetricsOverviewBody.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/metrics/overview?environment=Sandbox", method: .get, headers: key))
            #expect(api.activeSubscriptions == 1)
            #expect(Self.figure("activeSubscriptions", overview) == Double(api.activeSubscriptions))
            #expect(Self.figure("mrr", overview) == api.mrr)
            #expect(Self.figure("revenueLast30Days", overview) == api.revenueLast30Days)
            #expect(!overview.contains(#"id="first-steps""#))

            let query = "from=2026-01-01&to=2026-03-01&interval=week"
            let page = try await Self.get(client, "\(base)/metrics/activeSubscriptions?\(query)&environment=Sandbox", cookie: cookie)
            #expect(page.status == .ok)
            let series = try decode(
                SeriesBody.self,
                try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/metrics/activeSubscriptions?\(query)&environment=Sandbox", method: .get, headers: key))
            let shown = Self.values(field: "value", String(buffer: page.body))
            #expect(!shown.isEmpty && shown == series.points.map(\.value))
            let csv = try await Self.get(client, "\(base)/metrics/activeSubscriptions.csv?\(query)&environment=Sandbox", cookie: cookie)
            var csvHeaders = key
            csvHeaders[.accept] = "text/csv"
            let apiCSV = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/metrics/activeSubscriptions?\(query)&environment=Sandbox", method: .get, headers: csvHeaders)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(String(buffer: csv.body) == String(buffer: apiCSV.body))

            // A bad parameter is the API's named error, on the page.
            let bad = try await Self.get(client, "\(base)/metrics/mrr?from=2026-03-01&to=2026-01-01", cookie: cookie)
            #expect(bad.status == .badRequest)
            #expect(String(buffer: bad.body).contains("from: from (2026-03-01) must be before to"))

            // Customers: found by app user id and by transaction id; the customer page links the raw signed data.
            let found = try await Self.get(client, "\(base)/customers?q=700", cookie: cookie)
            #expect(found.status == .seeOther)
            let customerPath = try #require(found.headers[.location])
            let customer = String(buffer: try await Self.get(client, customerPath, cookie: cookie).body)
            #expect(customer.contains("Customer alice") && customer.contains("pro.monthly"))
            let raw = try await Self.get(client, "\(base)/raw/700", cookie: cookie)
            #expect(String(buffer: raw.body).contains(signed))
            #expect(try await Self.get(client, "\(base)/customers/cus_nobody", cookie: cookie).status == .notFound)
            #expect(try await Self.get(client, "\(base)/raw/999", cookie: cookie).status == .notFound)
            let byName = try await Self.get(client, "\(base)/customers?q=alice", cookie: cookie)
            #expect(byName.headers[.location] == customerPath)
            let none = String(buffer: try await Self.get(client, "\(base)/customers?q=nobody", cookie: cookie).body)
            #expect(none.contains("No customer goes by “nobody”."))

            // The list: alice, active on pro.monthly, with what she paid (USD); not among the inactive; bad filters 400.
            let listed = String(buffer: try await Self.get(client, "\(base)/customers?environment=Sandbox", cookie: cookie).body)
            let row = try #require(listed.components(separatedBy: "<tr data-customer=").dropFirst().first)
            #expect(row.contains(">alice</a>") && row.contains(#"<td data-field="status">active</td>"#) && row.contains("pro.monthly"))
            #expect(Self.values(field: "spent", listed).first.map { $0 > 0 } == true)
            let inactive = String(buffer: try await Self.get(client, "\(base)/customers?status=inactive", cookie: cookie).body)
            #expect(!inactive.contains(">alice</a>") && inactive.contains("No customers with this status yet."))
            #expect(try await Self.get(client, "\(base)/customers?status=gone", cookie: cookie).status == .badRequest)
            #expect(try await Self.get(client, "\(base)/customers?after=yesterday", cookie: cookie).status == .badRequest)
            let older = String(buffer: try await Self.get(client, "\(base)/customers?after=1:cus_", cookie: cookie).body)
            #expect(!older.contains(">alice</a>"))

            let events = String(buffer: try await Self.get(client, "\(base)/events?type=subscription_started", cookie: cookie).body)
            #expect(events.contains(#"<td data-field="type">subscription_started</td>"#))
            #expect(try await Self.get(client, "\(base)/events?type=started", cookie: cookie).status == .badRequest)
            let trials = try await Self.get(client, "\(base)/trials", cookie: cookie)
            #expect(trials.status == .ok)
            for template in DashboardTemplates.templates.map(\.0) {
                #expect(DashboardTemplates.library.getTemplate(named: template) != nil)
            }
        }
        await h.close()
    }

    @Test("sessions live in the database: a second server on it accepts the first one's cookie", arguments: TestDatabase.available)
    func sharedSessions(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await Self.user(h)
        let cookie = try await h.application().test(.router) { base -> String? in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            return try await Self.signIn(client, email: "ops@example.com", password: Self.password).cookie
        }
        let second = try await Harness.openCore(h.core.database.location, clock: h.clock)
        try await Harness.application(second).test(.router) { base in
            // Every answer is checked against the OpenAPI document, as the API tests do.
            let client = ConformingClient(base: base)
            let response = try await Self.get(client, "/dashboard/apps/\(h.app.appId)", cookie: cookie)
            #expect(response.status == .ok)
        }
        await second.database.close()
        await h.close()
    }

    @Test("return paths stay on the dashboard; tokens compare whole; the axis is round; numbers are grouped")
    func helpers() {
        #expect(DashboardPaths.safeNext("/dashboard/apps/a?x=1") == "/dashboard/apps/a?x=1")
        for evil in ["//evil.example", "https://evil.example", "/dashboard//evil.example", "/dashboardx", "/dashboard/\\evil", "/v1/apps"] {
            #expect(DashboardPaths.safeNext(evil) == nil, "\(evil)")
        }
        #expect(
            CSRFToken.matches("abc", "abc") && !CSRFToken.matches("abd", "abc") && !CSRFToken.matches("ab", "abc")
                && !CSRFToken.matches(nil, "abc"))
        #expect(SVGChart.axis(min: 0, max: 228.73) == (0, 300, 100))
        #expect(SVGChart.axis(min: -3, max: 7) == (-5, 10, 5))
        #expect(SVGChart.axis(min: 0, max: 0) == (0, 1, 0.25))
        #expect(DashboardFormat.money(1_234_567.891) == "1,234,567.89")
        #expect(DashboardFormat.money(-0.004) == "0.00")
        #expect(DashboardFormat.money(-12.5) == "-12.50")
        #expect(DashboardFormat.percent(0.5555) == "55.6%")
        #expect(DashboardFormat.count(1000) == "1,000")
        #expect(DashboardFormat.escaped(#"<a href="x">&'"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;")
    }

    // MARK: - Reading pages

    /// A headline figure's `data-value`.
    static func figure(_ key: String, _ html: String) -> Double? {
        guard let range = html.range(of: #"data-figure="\#(key)" data-value=""#) else { return nil }
        return Double(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// A field's `data-value`s in a page's table, top to bottom.
    static func values(field: String, _ html: String) -> [Double] {
        html.components(separatedBy: #"data-field="\#(field)" data-value=""#).dropFirst().compactMap { Double($0.prefix { $0 != "\"" }) }
    }

    struct MetricsOverviewBody: Decodable {
        var mrr: Double
        var activeSubscriptions: Int
        var revenueLast30Days: Double
    }

    struct SeriesBody: Decodable {
        struct Point: Decodable { var value: Double }
        var points: [Point]
    }
}
