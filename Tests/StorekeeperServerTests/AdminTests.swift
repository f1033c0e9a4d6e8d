import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OpenAPIKit
import Storage
import StorekeeperCore
import TestSupport
import Testing
import Yams

@testable import StorekeeperServer

@Suite("Admin, system endpoints and the schema")
struct AdminTests {
    @Test("products and entitlements are read and replaced; a bad catalog or configuration is a 400")
    func products() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let catalog = try decode(
                Catalog.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/products", method: .get, headers: headers(h.app.secretKey)))
            #expect(catalog.products.count == 3)
            let replaced = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/products", method: .put, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"products":[{"id":"gold","type":"nonConsumable","entitlements":["gold"]}]}"#))
            #expect(replaced.status == .ok)
            let entitlements = try decode(
                AppAdminController.EntitlementList.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/entitlements", method: .get, headers: headers(h.app.secretKey)))
            #expect(entitlements.entitlements.first?.id == "gold")
            let duplicate = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/products", method: .put, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"products":[{"id":"a","type":"consumable"},{"id":"a","type":"consumable"}]}"#))
            #expect(duplicate.status == .badRequest)
            let production = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"environments":["Production"]}"#))
            #expect(production.status == .badRequest)
            #expect(String(buffer: production.body).contains("appAppleId"))
            let bundle = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"bundleId":"x"}"#))
            #expect(bundle.status == .badRequest)
            let policy = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"transferPolicy":"keep","appAppleId":42,"environments":["Sandbox","Production"]}"#))
            #expect(policy.status == .ok)
            #expect(try decode(AppConfiguration.View.self, policy).transferPolicy == .keep)
        }
    }

    @Test("health, metrics and the OpenAPI document; unknown routes are JSON 404s")
    func system() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(try decode(SystemController.Health.self, health).status == "ok")
            let yaml = try await client.execute(uri: "/openapi.yaml", method: .get, headers: operatorHeaders())
            #expect(String(buffer: yaml.body).hasPrefix("openapi: 3.1.1"))
            let missing = try await client.execute(uri: "/v2/nothing", method: .get)
            #expect(missing.status == .notFound)
            #expect(try errorCode(missing) == "not_found")
            #expect(String(buffer: try await client.execute(uri: "/ping", method: .get).body) == "pong")
        }
    }

    @Test("every route is in the OpenAPI document, and every documented operation is a route")
    func openAPIMatchesRoutes() async throws {
        let h = try await Harness.make(.sqlite)
        let routes = Set(
            buildRouter(h.core).routes.map { route in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                return "\(route.method.rawValue) /" + path.joined(separator: "/")
            })
        let documented = Set(OpenAPIDocument.methodsByPath.flatMap { entry in entry.methods.map { "\($0) \(entry.template)" } })
        #expect(!routes.isEmpty)
        #expect(
            routes == documented,
            "only routed: \(routes.subtracting(documented).sorted()); only documented: \(documented.subtracting(routes).sorted())")
        await h.close()
    }

    @Test("the OpenAPI document passes OpenAPIKit's validation and reads back from its YAML as the same document")
    func openAPIValid() throws {
        try OpenAPIDocument.document.validate()
        let decoded = try YAMLDecoder().decode(OpenAPI.Document.self, from: OpenAPIDocument.yaml)
        #expect(decoded.paths.count == OpenAPIDocument.document.paths.count)
        #expect(decoded.components.schemas.count == OpenAPIDocument.document.components.schemas.count)
        #expect(OpenAPIDocument.yaml.hasPrefix("openapi: 3.1.1"))
        // The checker that every API test's answers go through can fail: an error body without its error.
        let conformance = OpenAPIConformance.shared
        #expect(!conformance.check(.object([:]), ["$ref": "#/components/schemas/Error"], at: "$").isEmpty)
        #expect(!conformance.check(.string("+1-2"), ["pattern": OpenAPIDocument.cursorPattern], at: "$").isEmpty)
        #expect(conformance.check(.string("12-3"), ["pattern": OpenAPIDocument.cursorPattern], at: "$").isEmpty)
    }

    @Test("what the document's schemas refuse, the code refuses: with a 400 that names the field")
    func schemaAndCodeAgree() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let secret = headers(h.app.secretKey)
            func refused(_ uri: String, _ method: HTTPRequest.Method = .get, body: String? = nil, field: String) async throws {
                let response = try await client.execute(
                    uri: uri, method: method, headers: secret, body: body.map { ByteBuffer(string: $0) })
                #expect(response.status == .badRequest, "\(method) \(uri) \(body ?? ""): \(response.status)")
                #expect(try decode(ErrorBody.self, response).error.field == field, "\(uri)")
            }
            // Environments are read in Apple's spelling or in lower case (the schema's enum), never another word.
            try await refused("/v1/customers/ann?environment=sandboxx", field: "environment")
            #expect(try await client.execute(uri: "/v1/customers/ann?environment=Sandbox", method: .get, headers: secret).status == .ok)
            #expect(try await client.execute(uri: "/v1/customers/ann?environment=sandbox", method: .get, headers: secret).status == .ok)
            // Cursors are digits only; limits 1 to 1000.
            try await refused("/v1/apps/\(h.app.appId)/events?after=%2B1-2", field: "after")
            try await refused("/v1/customers/ann/events?limit=1001", field: "limit")
            // 257 scalars is one too many; 256 × é (512 UTF-8 bytes) is fine.
            try await refused("/v1/subscribers/" + String(repeating: "a", count: 257), field: "appUserId")
            let accented = String(repeating: "é", count: 256).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
            #expect(try await client.execute(uri: "/v1/customers/\(accented)", method: .get, headers: secret).status == .ok)
            // An alias on two lines; an unknown configuration field; a product with an empty group.
            try await refused("/v1/customers/ann/alias", .post, body: #"{"alias":"a\nb"}"#, field: "alias")
            try await refused("/v1/apps/\(h.app.appId)", .patch, body: #"{"transferPolicyy":"keep"}"#, field: "transferPolicyy")
            // Apple's app ids are positive (the schema's minimum: Schemathesis found 0 accepted).
            try await refused("/v1/apps/\(h.app.appId)", .patch, body: #"{"appAppleId":0}"#, field: "appAppleId")
            // verifyReceipt's URLs are two http(s) URLs, production's then sandbox's (Schemathesis found [""] accepted);
            // so is the Server API's base URL.
            let app = "/v1/apps/\(h.app.appId)"
            try await refused(app, .patch, body: #"{"verifyReceiptURLs":[""]}"#, field: "verifyReceiptURLs")
            try await refused(
                app, .patch, body: #"{"verifyReceiptURLs":["https://a.example/verifyReceipt",""]}"#, field: "verifyReceiptURLs[1]")
            try await refused(
                app, .patch, body: #"{"serverAPI":{"issuerId":"i","keyId":"k","privateKey":"p","baseURL":"mailto:a@b.example"}}"#,
                field: "serverAPI.baseURL")
            // Found by probing every constraint of the bodies' schemas one at a time (.ci/schema_probe.py): a repeated
            // environment, empty secrets and ids, unknown fields of nested objects, and null where the document allows none.
            try await refused(app, .patch, body: #"{"environments":["Sandbox","Sandbox"]}"#, field: "environments")
            try await refused(app, .patch, body: #"{"sharedSecret":""}"#, field: "sharedSecret")
            try await refused(
                app, .patch, body: #"{"serverAPI":{"issuerId":"","keyId":"k","privateKey":"p"}}"#, field: "serverAPI.issuerId")
            try await refused(
                app, .patch, body: #"{"offerSigningKey":{"keyId":"k","privateKey":"p","size":1}}"#, field: "offerSigningKey.size")
            try await refused(app, .patch, body: #"{"proceeds":{"rates":{}}}"#, field: "proceeds.rates")
            try await refused(
                app, .patch, body: #"{"serverAPI":{"issuerId":"i","keyId":"k","privateKey":"p","baseUrl":"http://127.0.0.1:9"}}"#,
                field: "serverAPI.baseUrl")
            // A catalog's misspelt field would make a product that unlocks nothing.
            try await refused(
                app + "/products", .put, body: #"{"products":[{"id":"gold","type":"nonConsumable","entitlement":["gold"]}]}"#,
                field: "products.[0].entitlement")
            try await refused(app, .patch, body: #"{"catalog":{"products":[],"prodcts":[]}}"#, field: "catalog.prodcts")
            try await refused(app, .patch, body: #"{"catalog":null}"#, field: "catalog")
            try await refused(app, .patch, body: #"{"transferPolicy":null}"#, field: "transferPolicy")
            try await refused(app + "/integrations", .post, body: #"{"kind":"webhook","name":null}"#, field: "name")
            try await refused(app + "/paywalls/p", .put, body: #"{"id":null,"products":["pro.monthly"]}"#, field: "id")
            try await refused(
                app + "/experiments", .post,
                body:
                    #"{"key":"k","placement":"p","variants":[{"key":"a"},{"key":"b"}],"namespace":{"id":"n","start":0,"end":1,"size":2}}"#,
                field: "namespace.size")
            let urls = try await client.execute(
                uri: app, method: .patch, headers: secret,
                body: ByteBuffer(string: #"{"verifyReceiptURLs":["https://a.example/verifyReceipt","http://127.0.0.1:9/sandbox"]}"#))
            #expect(urls.status == .ok)
            let badGroup = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/products", method: .put, headers: secret,
                body: ByteBuffer(string: #"{"products":[{"id":"coins","type":"consumable","group":""}]}"#))
            #expect(badGroup.status == .badRequest)
        }
    }

    @Test(
        "a NUL, which PostgreSQL's text cannot hold: refused in an app user id by its rule, elsewhere a 400 from the database's data exception, never a 503 that asks the client to retry",
        arguments: TestDatabase.available)
    func nul(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            let secret = headers(h.app.secretKey)
            let customer = try await client.execute(uri: "/v1/customers/a%00b", method: .get, headers: secret)
            #expect(customer.status == .badRequest)
            #expect(try decode(ErrorBody.self, customer).error.field == "appUserId")
            let alias = try await client.execute(
                uri: "/v1/customers/ann/alias", method: .post, headers: secret, body: ByteBuffer(string: #"{"alias":"a\u0000b"}"#))
            #expect(alias.status == .badRequest)
            #expect(try decode(ErrorBody.self, alias).error.field == "alias")
            // An integration's name: no NUL, and at most 100 Unicode scalars as sent (the schema's count), spaces too.
            let integrations = "/v1/apps/\(h.app.appId)/integrations"
            let config = #""kind":"webhook","config":{"url":"https://hooks.example.com/x"}"#
            for name in [#"a\u0000b"#, String(repeating: "e\u{301}", count: 51), String(repeating: "x", count: 100) + " "] {
                let response = try await client.execute(
                    uri: integrations, method: .post, headers: secret, body: ByteBuffer(string: #"{\#(config),"name":"\#(name)"}"#))
                #expect(response.status == .badRequest, "\(name.unicodeScalars.count) scalars")
                #expect(try decode(ErrorBody.self, response).error.field == "name")
            }
            let longest = try await client.execute(
                uri: integrations, method: .post, headers: secret,
                body: ByteBuffer(string: #"{\#(config),"name":" \#(String(repeating: "x", count: 98)) "}"#))
            #expect(longest.status == .created)
            // A filter nothing validates: SQLite compares it (and matches nothing); PostgreSQL refuses the value.
            let filtered = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/metrics/mrr?from=2026-01-01&to=2026-01-03&product=a%00b", method: .get, headers: secret)
            #expect(filtered.status == (database == .postgres ? .badRequest : .ok))
            if database == .postgres {
                let error = try decode(ErrorBody.self, filtered).error
                #expect(error.code == "invalid_request" && error.permanent == true && !error.message.contains("SELECT"))
            }
        }
    }

    @Test("a method a known path does not take is 405 with Allow; an unknown path stays 404")
    func methodNotAllowed() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let trace = try await client.execute(uri: "/v1/customers/ann", method: .trace)
            #expect(trace.status == .methodNotAllowed)
            #expect(trace.headers[.allow] == "GET")
            #expect(try errorCode(trace) == "method_not_allowed")
            let delete = try await client.execute(uri: "/v1/apps/\(h.app.appId)", method: .delete, headers: headers(h.app.secretKey))
            #expect(delete.status == .methodNotAllowed)
            #expect(delete.headers[.allow] == "GET, PATCH")
            let getWebhook = try await client.execute(uri: "/v1/apps/x/notifications/appstore", method: .get)
            #expect(getWebhook.headers[.allow] == "POST")
            let unknown = try await client.execute(uri: "/v1/nothing/here", method: .trace)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("serve refuses pending migrations on an existing database unless asked to migrate; a new SQLite file migrates itself")
    func migrations() async throws {
        let location = try await TestDatabase.sqlite.fresh()
        guard case .sqlite(let path) = location else { return }
        // An existing file that is not ours yet.
        let raw = try await StorageDatabase.open(location)
        try await raw.transaction { try await $0.raw("CREATE TABLE unrelated (x INTEGER)").run() }
        await raw.close()
        var settings = CoreSettings()
        settings.database = location
        await #expect(throws: StorageError.self) { try await StorekeeperCore.open(settings, logger: .init(label: "t")) }
        settings.migrate = true
        let core = try await StorekeeperCore.open(settings, logger: .init(label: "t"))
        #expect(try await Migrator(database: core.database).pending().isEmpty)
        await core.database.close()
        // A path that does not exist yet is migrated without asking.
        var fresh = CoreSettings()
        fresh.database = .sqlite(path: path + ".new")
        let created = try await StorekeeperCore.open(fresh, logger: .init(label: "t"))
        #expect(try await Migrator(database: created.database).applied() == Set(Schema.migrations.map(\.version)))
        await created.database.close()
    }

}
