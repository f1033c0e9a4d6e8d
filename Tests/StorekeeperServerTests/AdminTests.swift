import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
@testable import StorekeeperServer
import Testing

@Suite("Admin, system endpoints and the schema")
struct AdminTests {
    @Test("products and entitlements are read and replaced; a bad catalog or configuration is a 400")
    func products() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let catalog = try json(try await client.execute(uri: "/v1/apps/\(h.app.appId)/products", method: .get, headers: headers(h.app.secretKey)))
            #expect((catalog["products"] as? [[String: Any]])?.count == 3)
            let replaced = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/products", method: .put, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"products":[{"id":"gold","type":"nonConsumable","entitlements":["gold"]}]}"#))
            #expect(replaced.status == .ok)
            let entitlements = try json(try await client.execute(uri: "/v1/apps/\(h.app.appId)/entitlements", method: .get, headers: headers(h.app.secretKey)))
            #expect((entitlements["entitlements"] as? [[String: Any]])?.first?["id"] as? String == "gold")
            let duplicate = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/products", method: .put, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"products":[{"id":"a","type":"consumable"},{"id":"a","type":"consumable"}]}"#))
            #expect(duplicate.status == .badRequest)
            let production = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                body: ByteBuffer(string: #"{"environments":["Production"]}"#))
            #expect(production.status == .badRequest)
            #expect(String(buffer: production.body).contains("appAppleId"))
            let bundle = try await client.execute(uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                                                  body: ByteBuffer(string: #"{"bundleId":"x"}"#))
            #expect(bundle.status == .badRequest)
            let policy = try await client.execute(uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                                                  body: ByteBuffer(string: #"{"transferPolicy":"keep","appAppleId":42,"environments":["Sandbox","Production"]}"#))
            #expect(policy.status == .ok)
            #expect(try json(policy)["transferPolicy"] as? String == "keep")
        }
    }

    @Test("health, metrics and the OpenAPI document; unknown routes are JSON 404s")
    func system() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(try json(health)["status"] as? String == "ok")
            let yaml = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(String(buffer: yaml.body).hasPrefix("openapi: 3.1.0"))
            let missing = try await client.execute(uri: "/v2/nothing", method: .get)
            #expect(missing.status == .notFound)
            #expect(try errorCode(missing) == "not_found")
            #expect(String(buffer: try await client.execute(uri: "/ping", method: .get).body) == "pong")
        }
    }

    @Test("every route is in the OpenAPI document, and every documented operation is a route")
    func openAPIMatchesRoutes() async throws {
        let h = try await Harness.make(.sqlite)
        let routes = Set(h.core.router().routes.map { route in
            let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            return "\(route.method.rawValue.lowercased()) /" + path.joined(separator: "/")
        })
        var documented: Set<String> = []
        var currentPath: String?
        var inPaths = false
        for line in OpenAPIDocument.yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let currentPath, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "patch", "delete"].contains(String(method)) { documented.insert("\(method) \(currentPath)") }
            }
        }
        #expect(!routes.isEmpty)
        #expect(routes == documented, "only routed: \(routes.subtracting(documented).sorted()); only documented: \(documented.subtracting(routes).sorted())")
        await h.close()
    }

    @Test("serve refuses pending migrations on an existing database unless asked to migrate; a new SQLite file migrates itself")
    func migrations() async throws {
        let location = try await TestDatabase.sqlite.fresh()
        guard case .sqlite(let path) = location else { return }
        // An existing file that is not ours yet.
        let raw = try await StorageDatabase.open(location)
        try await raw.transaction { try await $0.raw("CREATE TABLE unrelated (x INTEGER)").run() }
        await raw.close()
        var settings = ServerSettings()
        settings.database = location
        await #expect(throws: StorageError.self) { try await StorekeeperCore.open(settings, logger: .init(label: "t")) }
        settings.migrate = true
        let core = try await StorekeeperCore.open(settings, logger: .init(label: "t"))
        #expect(try await Migrator(database: core.database).pending().isEmpty)
        await core.database.close()
        // A path that does not exist yet is migrated without asking.
        var fresh = ServerSettings()
        fresh.database = .sqlite(path: path + ".new")
        let created = try await StorekeeperCore.open(fresh, logger: .init(label: "t"))
        #expect(try await Migrator(database: created.database).applied() == Set(Schema.migrations.map(\.version)))
        await created.database.close()
    }

    @Test("database URLs: postgres and sqlite forms, and a clear error for anything else")
    func locations() throws {
        #expect(try DatabaseLocation(url: "postgres://u:p@h/db") == .postgres(url: "postgres://u:p@h/db"))
        #expect(try DatabaseLocation(url: "sqlite:/tmp/x.sqlite") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(try DatabaseLocation(url: "data.sqlite") == .sqlite(path: "data.sqlite"))
        #expect(throws: StorageError.self) { try DatabaseLocation(url: "mysql://h/db") }
        #expect(!DatabaseLocation.postgres(url: "postgres://user:hunter2@h:5432/db").description.contains("hunter2"))
    }

    @Test("event cursors: what nextCursor gives, after takes back; anything else is refused")
    func cursors() {
        #expect(EventCursor("0") == .start)
        #expect(EventCursor("7412-19") == EventCursor(txOrder: 7412, seq: 19))
        #expect(EventCursor(EventCursor(txOrder: 3, seq: 4).description) == EventCursor(txOrder: 3, seq: 4))
        for bad in ["", "x", "1-", "-1", "1-2-3", "-1-2", "99999999999999999999-1"] { #expect(EventCursor(bad) == nil, "\(bad)") }
    }
}
