import AppStore
import Experiments
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Paywalls, placements and experiments through the API: the lifecycle, the kill switch, stickiness, exposures, bad
/// input, results from the ledger, and merges.
@Suite("Experiments API")
struct ExperimentAPITests {
    struct Answer: Decodable {
        struct Part: Decodable, Equatable {
            var key: String
            var variant: String
            var phase: Int
        }
        struct PaywallPart: Decodable { var id: String }
        var placement: String
        var paywall: PaywallPart
        var experiment: Part?
    }

    struct Definition: Decodable {
        var key: String
        var status: String
        var phase: Int
        var coverage: Double
        var seed: String?
        var startedAt: Int64?
    }

    struct Exposure: Decodable {
        var recorded: Bool
        var variant: String
        var exposedAt: Int64
    }

    /// A paywall for each of two variants, a placement, and a draft experiment on it with two equal arms.
    static func setUp(_ client: any TestClientProtocol, _ h: Harness, key: String = "paywall-test") async throws {
        let base = "/v1/apps/\(h.app.appId)"
        #expect(
            try await client.send(.put, base + "/paywalls/plain", h.app.secretKey, #"{"products": ["pro.monthly"]}"#).status == .created)
        let fancy = try await client.send(
            .put, base + "/paywalls/fancy", h.app.secretKey, #"{"products": ["pro.yearly", "pro.monthly"], "config": {"hero": "stars"}}"#)
        #expect(fancy.status == .created)
        #expect(
            try await client.send(.put, base + "/placements/onboarding", h.app.secretKey, #"{"defaultPaywall": "plain"}"#).status
                == .created)
        let created = try await client.send(
            .post, base + "/experiments", h.app.secretKey,
            #"{"key": "\#(key)", "placement": "onboarding", "variants": [{"key": "control"}, {"key": "fancy", "paywall": "fancy"}]}"#)
        #expect(created.status == .created, "\(String(buffer: created.body))")
        // The server's own answer, with the fields it keeps, reads back as a definition: posted again it is refused
        // only because its key is taken (409), not for the fields the server added (400).
        let again = try await client.send(.post, base + "/experiments", h.app.secretKey, String(buffer: created.body))
        #expect(again.status == .conflict, "\(String(buffer: again.body))")
    }

    /// The first app user id (u0, u1 …) that `variant` gets in phase `phase` of `key` with equal weights.
    static func user(in variant: String, key: String = "paywall-test", after skip: Int = 0) -> String {
        var found = 0
        for index in 0..<10_000 {
            let id = "u\(index)"
            guard let hash = GrowthBookHashing.hash(seed: key, value: id) else { continue }
            if (hash < 0.5 ? "control" : "fancy") == variant {
                if found == skip { return id }
                found += 1
            }
        }
        return ""
    }

    @Test(
        "lifecycle: a draft serves the default; started, the arm is sticky; pausing serves the control at once; new weights start a new phase; all audited",
        arguments: TestDatabase.available)
    func lifecycle(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            try await Self.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            let treated = Self.user(in: "fancy")
            func ask(_ user: String) async throws -> Answer {
                let response = try await client.send(.get, "/v1/customers/\(user)/placements/onboarding?appVersion=2.1", h.app.publicKey)
                #expect(response.status == .ok)
                return try decode(Answer.self, response)
            }
            // A draft: the placement's default, nobody in the test.
            var answer = try await ask(treated)
            #expect(answer.paywall.id == "plain" && answer.experiment == nil)
            let draft = try decode(Definition.self, try await client.send(.get, base + "/experiments/paywall-test", h.app.secretKey))
            #expect(draft.status == "draft" && draft.phase == 0 && draft.coverage == 1 && draft.startedAt == nil)
            // A merge patch: null puts an optional field back to its default (as the OpenAPI document says).
            let changed = try await client.send(
                .patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"coverage": 0.5, "seed": "s2"}"#)
            #expect(try decode(Definition.self, changed).coverage == 0.5)
            let reset = try await client.send(
                .patch, base + "/experiments/paywall-test", h.app.secretKey,
                #"{"coverage": null, "seed": null, "targeting": null, "hashVersion": null}"#)
            #expect(reset.status == .ok)
            let back = try decode(Definition.self, reset)
            #expect(back.coverage == 1 && back.seed == draft.seed && back.phase == 0)

            let started = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            #expect(try decode(Definition.self, started).startedAt == h.clock.now)
            answer = try await ask(treated)
            #expect(answer.paywall.id == "fancy" && answer.experiment == .init(key: "paywall-test", variant: "fancy", phase: 0))
            // The SDK's offline hash gives the same arm.
            #expect(
                Assigner.assign(
                    .init(key: "paywall-test", phase: 0, variants: [.init(key: "control"), .init(key: "fancy")]), userId: treated
                ).variant == "fancy")

            // Coverage 0 keeps the assigned customer where it is; a new one is outside the test.
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"coverage": 0}"#)
            #expect(try await ask(treated).experiment?.variant == "fancy")
            let newcomer = try await ask(Self.user(in: "fancy", after: 1))
            #expect(newcomer.experiment == nil && newcomer.paywall.id == "plain")

            // The kill switch: paused, everyone gets the control at once (no stale cache), and the arm comes back.
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "paused"}"#)
            answer = try await ask(treated)
            #expect(answer.paywall.id == "plain" && answer.experiment == nil)
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running", "coverage": 1}"#)
            #expect(try await ask(treated).experiment?.variant == "fancy")

            // New weights re-randomise: phase 1.
            let reweighted = try await client.send(
                .patch, base + "/experiments/paywall-test", h.app.secretKey,
                #"{"variants": [{"key": "control", "weight": 0.999}, {"key": "fancy", "weight": 0.001, "paywall": "fancy"}]}"#)
            #expect(try decode(Definition.self, reweighted).phase == 1)
            #expect(try await ask(treated).experiment == .init(key: "paywall-test", variant: "control", phase: 1))

            // Shipping a winner: everyone gets it, nobody is in the test any more, and the experiment is final.
            let shipped = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"winner": "fancy"}"#)
            #expect(try decode(Definition.self, shipped).status == "stopped")
            answer = try await ask("someone-else")
            #expect(answer.paywall.id == "fancy" && answer.experiment == nil)
            let again = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            #expect(again.status == .conflict)

            let actions = try await client.auditActions(h)
            #expect(actions.filter { $0 == "paywall" }.count == 2 && actions.contains("placement"))
            #expect(actions.filter { $0 == "experiment" }.count == 9)  // created, and 8 changes
        }
    }

    @Test(
        "exposures: the first is recorded once; another variant or an old phase is 409; unknown ones are 404",
        arguments: TestDatabase.available)
    func exposures(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            try await Self.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            let user = Self.user(in: "control")
            func expose(_ variant: String, phase: Int = 0, experiment: String = "paywall-test", user: String = user) async throws
                -> TestResponse
            {
                try await client.send(
                    .post, "/v1/customers/\(user)/exposures", h.app.publicKey,
                    #"{"experiment": "\#(experiment)", "variant": "\#(variant)", "phase": \#(phase), "placement": "onboarding"}"#)
            }
            // Not asked yet: no assignment.
            #expect(try await expose("control").status == .conflict)
            _ = try await client.send(.get, "/v1/customers/\(user)/placements/onboarding", h.app.publicKey)
            let first = try await expose("control")
            #expect(first.status == .created)
            let recorded = try decode(Exposure.self, first)
            h.clock.set(h.clock.now + 60_000)
            let repeated = try await expose("control")
            #expect(repeated.status == .ok)
            let kept = try decode(Exposure.self, repeated)
            #expect(!kept.recorded && kept.exposedAt == recorded.exposedAt)
            let wrong = try await expose("fancy")
            #expect(try wrong.status == .conflict && errorCode(wrong) == "conflict")
            #expect(try await expose("control", phase: 3).status == .conflict)
            #expect(try await expose("control", experiment: "nope").status == .notFound)
            let unknownPlacement = try await client.send(.get, "/v1/customers/\(user)/placements/nowhere", h.app.publicKey)
            #expect(unknownPlacement.status == .notFound)
        }
    }

    @Test("bad definitions are 400 naming the field; keys, other apps and taken keys are refused", arguments: TestDatabase.available)
    func badInput(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            try await Self.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            let cases: [(String, String)] = [
                (
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a", "weight": 0.6}, {"key": "b", "weight": 0.5}]}"#,
                    "variants"
                ),
                (#"{"key": "e", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "a"}]}"#, "variants[1].key"),
                (#"{"key": "e", "placement": "onboarding", "variants": [{"key": "a"}]}"#, "variants"),
                (
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "b", "paywall": "ghost"}]}"#,
                    "variants[1].paywall"
                ),
                (#"{"key": "e", "placement": "onboarding", "coverage": 1.5, "variants": [{"key": "a"}, {"key": "b"}]}"#, "coverage"),
                (#"{"key": "e", "placement": "onboarding", "variants": [{"key": "a", "weigth": 1}, {"key": "b"}]}"#, "variants[0].weigth"),
                (
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a", "weight": "half"}, {"key": "b"}]}"#,
                    "variants[0].weight"
                ),
                (#"{"key": "e", "placement": "nowhere", "variants": [{"key": "a"}, {"key": "b"}]}"#, "placement"),
                (#"{"key": "e", "variants": [{"key": "a"}, {"key": "b"}]}"#, "placement"),
                (#"{"key": "e", "placement": "onboarding", "status": "sideways", "variants": [{"key": "a"}, {"key": "b"}]}"#, "status"),
                (#"{"key": "e/x", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "b"}]}"#, "key"),
                (#"{"placement": "onboarding", "variants": [{"key": "a"}, {"key": "b"}]}"#, "key"),
                // NUL and other control characters are refused in keys, as everywhere else.
                (#"{"key": "e", "placement": "onboarding", "variants": [{"key": "a\u0000"}, {"key": "b"}]}"#, "variants[0].key"),
                (#"{"key": "e", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "b\nc"}]}"#, "variants[1].key"),
                (
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "\#(String(repeating: "k", count: 257))"}]}"#,
                    "variants[1].key"
                ),
                // A payload nested past 32 levels is named; it would be answered inside more.
                (
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a", "payload": \#(Self.nested(33))}, {"key": "b"}]}"#,
                    "variants[0].payload"
                ),
            ]
            for (json, field) in cases {
                let response = try await client.send(.post, base + "/experiments", h.app.secretKey, json)
                #expect(response.status == .badRequest, "\(json)")
                #expect(try decode(ErrorBody.self, response).error.field == field, "\(json)")
            }
            // Nested past 64 levels: refused before anything decodes it, paywalls and definitions alike.
            for (uri, method, json) in [
                (
                    base + "/experiments", HTTPRequest.Method.post,
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": "a", "payload": \#(Self.nested(510))}, {"key": "b"}]}"#
                ),
                (base + "/paywalls/deep", .put, #"{"products": ["pro.monthly"], "config": \#(Self.nested(510))}"#),
            ] {
                let deep = try await client.send(method, uri, h.app.secretKey, json)
                #expect(deep.status == .badRequest)
                #expect(try decode(ErrorBody.self, deep).error.message.contains("64"))
            }
            let deepConfig = try await client.send(
                .put, base + "/paywalls/deep", h.app.secretKey, #"{"products": ["pro.monthly"], "config": \#(Self.nested(40))}"#)
            #expect(try deepConfig.status == .badRequest && decode(ErrorBody.self, deepConfig).error.field == "config")
            let fine = try await client.send(
                .put, base + "/paywalls/deep", h.app.secretKey, #"{"products": ["pro.monthly"], "config": \#(Self.nested(32))}"#)
            #expect(fine.status == .created)
            #expect(try await client.send(.get, base + "/experiments/definitions", h.app.publicKey).status == .ok)
            let plain = try decode(
                ErrorBody.self,
                try await client.send(
                    .post, base + "/experiments", h.app.secretKey,
                    #"{"key": "e", "placement": "onboarding", "variants": [{"key": 7}, {"key": "b"}]}"#))
            #expect(plain.error.message == "must be text" && plain.error.field == "variants[0].key")

            // Paywalls: products of the catalog, config at most 64 KB.
            let ghost = try await client.send(.put, base + "/paywalls/x", h.app.secretKey, #"{"products": ["pro.monthly", "ghost"]}"#)
            #expect(try decode(ErrorBody.self, ghost).error.field == "products[1]")
            let huge = String(repeating: "a", count: 70_000)
            let big = try await client.send(
                .put, base + "/paywalls/x", h.app.secretKey, #"{"products": ["pro.monthly"], "config": "\#(huge)"}"#)
            #expect(try big.status == .badRequest && decode(ErrorBody.self, big).error.field == "config")
            #expect(try await client.send(.delete, base + "/paywalls/fancy", h.app.secretKey).status == .conflict)

            // Keys and apps.
            #expect(try await client.send(.get, base + "/experiments", h.app.publicKey).status == .forbidden)
            #expect(try await client.send(.get, base + "/experiments/definitions", h.app.publicKey).status == .ok)
            let other = try await h.core.administration.create(Harness.config(bundle: "com.example.other"))
            #expect(try await client.send(.get, base + "/experiments/paywall-test", other.secretKey).status == .notFound)
            #expect(try await client.send(.get, "/v1/apps/\(other.appId)/experiments/paywall-test", other.secretKey).status == .notFound)
            #expect(try await client.send(.get, base + "/experiments/definitions", other.publicKey).status == .notFound)
            let taken = try await client.send(
                .post, base + "/experiments", h.app.secretKey,
                #"{"key": "paywall-test", "placement": "onboarding", "variants": [{"key": "a"}, {"key": "b"}]}"#)
            #expect(taken.status == .conflict)
            // One running experiment per placement.
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            let second = try await client.send(
                .post, base + "/experiments", h.app.secretKey,
                #"{"key": "second", "placement": "onboarding", "status": "running", "variants": [{"key": "a"}, {"key": "b"}]}"#)
            #expect(second.status == .conflict)
            let phase = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"phase": 4}"#)
            #expect(try phase.status == .badRequest && decode(ErrorBody.self, phase).error.field == "phase")
        }
    }

    /// JSON objects nested `depth` deep: `{"a":{"a":…{}}}`.
    static func nested(_ depth: Int) -> String {
        String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
    }

    /// The results as the API answers them (every test's mirror).
    struct Results: Decodable {
        struct Arm: Decodable {
            var key: String
            var exposed: Int
            var trials: Int
            var paid: Int
            var grossUSD: Double
            var refundsUSD: Double
            var proceedsUSD: Double
        }
        var arms: [Arm]
        var analysis: AnalysisResult
        var recommendation: Recommendation
    }

    @Test(
        "results count what exposed customers did after their exposure, within the window, once per merged person",
        arguments: TestDatabase.available)
    func results(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(10))
        try await h.test { client in
            try await Self.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            let controls = (0..<3).map { Self.user(in: "control", after: $0) }
            let fancies = (0..<3).map { Self.user(in: "fancy", after: $0) }
            // Bought before the exposure: not the test's doing.
            try await client.buy(h, controls[0], id: "100", at: at(9))
            for (user, variant) in controls.map({ ($0, "control") }) + fancies.map({ ($0, "fancy") }) {
                _ = try await client.send(.get, "/v1/customers/\(user)/placements/onboarding", h.app.publicKey)
                let exposed = try await client.send(
                    .post, "/v1/customers/\(user)/exposures?environment=Sandbox", h.app.publicKey,
                    #"{"experiment": "paywall-test", "variant": "\#(variant)", "phase": 0, "placement": "onboarding"}"#)
                #expect(exposed.status == .created)
            }
            // After: two payers and a trial in the treatment, within the window; one payer after the window.
            try await client.buy(h, fancies[0], id: "200", at: at(11))
            try await client.buy(h, fancies[1], id: "300", at: at(12), trial: true)
            try await client.buy(h, controls[1], id: "400", at: at(30))
            h.clock.set(at(40))

            var results = try decode(
                Results.self, try await client.send(.get, base + "/experiments/paywall-test/results?environment=Sandbox", h.app.secretKey))
            #expect(results.arms.map(\.exposed) == [3, 3])
            #expect(results.arms.map(\.paid) == [0, 1] && results.arms.map(\.trials) == [0, 1])
            #expect(abs(results.arms[1].grossUSD - 9.99) < 1e-9 && results.arms[1].proceedsUSD > 0 && results.arms[1].proceedsUSD < 9.99)
            #expect(results.recommendation.action == .keepRunning)
            let unbounded = try decode(
                Results.self,
                try await client.send(
                    .get, base + "/experiments/paywall-test/results?environment=Sandbox&window=unbounded", h.app.secretKey))
            #expect(unbounded.arms.map(\.paid) == [1, 1])
            // An environment the app does not take is refused.
            let production = try await client.send(.get, base + "/experiments/paywall-test/results?environment=Production", h.app.secretKey)
            #expect(production.status == .badRequest)

            // A merge: the survivor keeps its own arm; the merged person is counted once.
            let merged = try await client.send(
                .post, "/v1/customers/\(fancies[2])/alias", h.app.secretKey, #"{"alias": "\#(controls[2])"}"#)
            #expect(merged.status == .ok)
            results = try decode(
                Results.self, try await client.send(.get, base + "/experiments/paywall-test/results?environment=Sandbox", h.app.secretKey))
            #expect(results.arms.map(\.exposed) == [2, 3])
            let survivor = try decode(
                Answer.self, try await client.send(.get, "/v1/customers/\(controls[2])/placements/onboarding", h.app.publicKey))
            #expect(survivor.experiment?.variant == "fancy")
        }
    }
}

extension TestClientProtocol {
    /// A request with a JSON body (or none) and a key.
    func send(_ method: HTTPRequest.Method, _ uri: String, _ key: String, _ json: String? = nil) async throws -> TestResponse {
        try await execute(uri: uri, method: method, headers: headers(key), body: json.map { ByteBuffer(string: $0) })
    }

    /// Posts a Sandbox purchase of pro.monthly (a free trial with `trial`) made at `purchase` for `user`.
    func buy(_ h: Harness, _ user: String, id: String, at purchase: Int64, trial: Bool = false) async throws {
        let payload = Payloads.transaction(
            id, purchase: purchase, expires: purchase + 30 * 86_400_000, period: trial ? .trial : .regular, environment: .sandbox,
            bundleId: bundleId)
        let response = try await execute(
            uri: "/v1/customers/\(user)/transactions", method: .post, headers: headers(h.app.publicKey),
            body: body(["signedTransaction": try testCA.sign(payload)]))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
    }
}

@Suite("Experiments dashboard")
struct ExperimentDashboardTests {
    @Test(
        "the pages: a refused definition shows its reason; start, pause and ship are CSRF-protected, audited with the user, and results show",
        arguments: [TestDatabase.sqlite])
    func pages(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await DashboardTests.user(h)
        try await h.application().test(.router) { base in
            let client = ConformingClient(base: base)
            try await ExperimentAPITests.setUp(client, h, key: "made-by-api")
            let (_, cookie) = try await DashboardTests.signIn(client, email: "ops@example.com", password: DashboardTests.password)
            let list = "/dashboard/apps/\(h.app.appId)/experiments"
            let listPage = String(buffer: try await DashboardTests.get(client, list + "?environment=Sandbox", cookie: cookie).body)
            #expect(listPage.contains("made-by-api") && listPage.contains("New experiment"))
            let csrf = try #require(DashboardTests.csrf(listPage))

            // A refused definition: the form again, with the reason and what was typed.
            let bad = #"{"key": "dash", "placement": "onboarding", "variants": [{"key": "a", "weight": 0.7}, {"key": "b", "weight": 0.7}]}"#
            let refused = try await client.execute(
                uri: list + "?environment=Sandbox", method: .post,
                headers: DashboardTests.form([("csrf", csrf), ("definition", bad)], cookie: cookie).0,
                body: DashboardTests.form([("csrf", csrf), ("definition", bad)], cookie: cookie).1)
            #expect(refused.status == .badRequest)
            let refusedPage = String(buffer: refused.body)
            #expect(refusedPage.contains("must add up to 1") && refusedPage.contains("&quot;weight&quot;: 0.7"))

            let good =
                #"{"key": "dash", "placement": "onboarding", "variants": [{"key": "control"}, {"key": "fancy", "paywall": "fancy"}]}"#
            let (headers, body) = DashboardTests.form([("csrf", csrf), ("definition", good)], cookie: cookie)
            let created = try await client.execute(uri: list + "?environment=Sandbox", method: .post, headers: headers, body: body)
            #expect(created.status == .seeOther)
            let path = try #require(created.headers[.location])
            #expect(path.hasPrefix(list + "/dash"))

            func press(_ field: String, _ value: String, token: String = csrf) async throws -> TestResponse {
                let (headers, body) = DashboardTests.form([("csrf", token), (field, value)], cookie: cookie)
                return try await client.execute(
                    uri: "\(list)/dash/status?environment=Sandbox", method: .post, headers: headers, body: body)
            }
            #expect(try await press("status", "running", token: "forged").status == .forbidden)
            #expect(try await press("status", "running").status == .seeOther)
            // Someone is exposed, so the results table has a row with a count.
            let user = ExperimentAPITests.user(in: "fancy", key: "dash")
            _ = try await client.send(.get, "/v1/customers/\(user)/placements/onboarding", h.app.publicKey)
            _ = try await client.send(
                .post, "/v1/customers/\(user)/exposures", h.app.publicKey,
                #"{"experiment": "dash", "variant": "fancy", "phase": 0, "placement": "onboarding"}"#)
            var page = String(buffer: try await DashboardTests.get(client, path, cookie: cookie).body)
            #expect(page.contains(#"data-field="status">running<"#) && page.contains(#"<tr data-variant="fancy">"#))
            #expect(page.contains(#"data-field="exposed">1<"#) && page.contains("Pause") && page.contains("Ship fancy"))
            #expect(page.contains(#"data-field="recommendation">keepRunning<"#))

            // The editor: a refused change keeps what was typed and says why.
            let edit = DashboardTests.form([("csrf", csrf), ("definition", #"{"coverage": 2}"#)], cookie: cookie)
            let refusedEdit = try await client.execute(
                uri: "\(list)/dash/edit?environment=Sandbox", method: .post, headers: edit.0, body: edit.1)
            #expect(refusedEdit.status == .badRequest && String(buffer: refusedEdit.body).contains("coverage is 2.0"))

            #expect(try await press("winner", "fancy").status == .seeOther)
            page = String(buffer: try await DashboardTests.get(client, path, cookie: cookie).body)
            #expect(page.contains(#"data-field="status">stopped<"#) && !page.contains("Ship fancy"))
            #expect(try await press("status", "running").status == .conflict)

            let audit = try decode(
                AppAdminController.AuditLog.self, try await client.send(.get, "/v1/apps/\(h.app.appId)/audit", h.app.secretKey))
            let byUser = audit.audit.filter { $0.action == "experiment" && $0.detail.contains("by ops@example.com") }
            #expect(byUser.count == 3, "\(audit.audit.map(\.detail))")
        }
    }
}

@Suite("Experiments on two servers")
struct ExperimentTwoServerTests {
    @Test(
        "a pause on one server reaches another sharing the database within a second, though it had the experiment cached",
        arguments: TestDatabase.available)
    func killSwitch(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        let second = try await Harness.openCore(h.core.database.location, clock: h.clock)
        try await h.test { client in
            try await ExperimentAPITests.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#)
            let caller = try await second.apps.authenticate(bearer: h.app.publicKey)
            let user = ExperimentAPITests.user(in: "fancy")
            func ask() async throws -> PlacementAnswer {
                try await second.placements.placement(
                    "onboarding", for: user, caller: caller, context: .init(appVersion: nil, storefront: nil, environment: .sandbox))
            }
            // The second server loads the catalog and assigns.
            #expect(try await ask().experiment?.variant == "fancy")
            _ = try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "paused"}"#)
            // Its catalog was loaded less than a second ago: a second later, it must have read the pause.
            try await Task.sleep(for: .milliseconds(1050))
            let paused = try await ask()
            #expect(paused.experiment == nil && paused.paywall.id == "plain")
        }
        await second.database.close()
    }
}
