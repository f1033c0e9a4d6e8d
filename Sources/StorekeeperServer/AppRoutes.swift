import AppStore
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import Storage

/// `/v1/apps/{appId}/…`: Apple's webhook (no key: the signature is the proof), and the admin endpoints (secret key).
struct AppRoutes {
    let ingestion: Ingestion
    var registry: AppRegistry { ingestion.registry }

    func register(_ router: Router<ServerContext>) {
        router.post("/v1/apps/:appId/notifications/appstore") { request, context in try await notification(request, context) }
        router.get("/v1/apps/:appId") { request, context in try await getApp(request, context) }
        router.patch("/v1/apps/:appId") { request, context in try await patchApp(request, context) }
        router.get("/v1/apps/:appId/products") { request, context in try await getProducts(request, context) }
        router.put("/v1/apps/:appId/products") { request, context in try await putProducts(request, context) }
        router.get("/v1/apps/:appId/entitlements") { request, context in try await getEntitlements(request, context) }
        router.post("/v1/apps/:appId/keys/rotate") { request, context in try await rotateKey(request, context) }
        router.get("/v1/apps/:appId/events") { request, context in try await appEvents(request, context) }
        router.get("/v1/apps/:appId/audit") { request, context in try await audit(request, context) }
    }

    static func appId(_ context: ServerContext) throws -> String {
        guard let id = context.parameters.get("appId"), !id.isEmpty, id.utf8.count <= 64 else {
            throw APIError.notFound("no such app")
        }
        return id
    }

    struct SignedPayloadBody: Decodable { var signedPayload: String }

    struct NotificationAnswer: Encodable { var result: String }

    func notification(_ request: Request, _ context: ServerContext) async throws -> Response {
        let appId = try Self.appId(context)
        // An unknown app is 404 before the body is read.
        _ = try await registry.app(id: appId)
        let body = try await RequestBody.decode(SignedPayloadBody.self, request, context: context)
        let outcome = try await ingestion.ingestNotification(app: appId, signedPayload: body.signedPayload)
        return try JSONResponse.make(NotificationAnswer(result: outcome.rawValue))
    }

    func getApp(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        return try JSONResponse.make(app.config.view(appId: app.id))
    }

    /// Every field is optional; those present replace the stored ones. Secrets can be set or, with null, removed.
    struct AppPatch: Decodable {
        var appAppleId: Int64??
        var environments: [String]?
        var trustedRoots: [String]??
        var sharedSecret: String??
        var serverAPI: AppConfiguration.ServerAPICredentials??
        var verifyReceiptURLs: [String]??
        var catalog: Catalog?
        var transferPolicy: AppConfiguration.TransferPolicy?

        enum CodingKeys: String, CodingKey {
            case appAppleId, environments, trustedRoots, sharedSecret, serverAPI, verifyReceiptURLs, catalog, transferPolicy, bundleId
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.bundleId) {
                throw APIError.invalidRequest("bundleId cannot change: create another app for another bundle id")
            }
            func nullable<T: Decodable>(_ key: CodingKeys) throws -> T?? {
                guard c.contains(key) else { return nil }
                return .some(try c.decodeNil(forKey: key) ? nil : try c.decode(T.self, forKey: key))
            }
            appAppleId = try nullable(.appAppleId)
            environments = try c.decodeIfPresent([String].self, forKey: .environments)
            trustedRoots = try nullable(.trustedRoots)
            sharedSecret = try nullable(.sharedSecret)
            serverAPI = try nullable(.serverAPI)
            verifyReceiptURLs = try nullable(.verifyReceiptURLs)
            catalog = try c.decodeIfPresent(Catalog.self, forKey: .catalog)
            transferPolicy = try c.decodeIfPresent(AppConfiguration.TransferPolicy.self, forKey: .transferPolicy)
        }

        func applied(to config: AppConfiguration) -> AppConfiguration {
            var config = config
            if let appAppleId { config.appAppleId = appAppleId }
            if let environments { config.environments = environments }
            if let trustedRoots { config.trustedRoots = trustedRoots }
            if let sharedSecret { config.sharedSecret = sharedSecret }
            if let serverAPI { config.serverAPI = serverAPI }
            if let verifyReceiptURLs { config.verifyReceiptURLs = verifyReceiptURLs }
            if let catalog { config.catalog = catalog }
            if let transferPolicy { config.transferPolicy = transferPolicy }
            return config
        }
    }

    func patchApp(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        let patch: AppPatch
        do {
            patch = try await RequestBody.decode(AppPatch.self, request, context: context)
        }
        let updated = patch.applied(to: app.config)
        try await save(updated, app: app)
        return try JSONResponse.make(updated.view(appId: app.id))
    }

    func save(_ config: AppConfiguration, app: AppRuntime) async throws {
        try config.validate()
        let json = String(decoding: try JSONEncoder.api.encode(config), as: UTF8.self)
        let now = ingestion.nowMs
        try await ingestion.database.writing { session in
            try await session.updateApp(id: app.id, bundleId: config.bundleId, config: json, at: now)
            try await session.deleteStates(app: app.id, keeping: config.environments)
        }
        registry.invalidate(app: app.id)
        // Every cached state was computed with the old catalog or environments.
        ingestion.states.forgetAll()
    }

    func getProducts(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        return try JSONResponse.make(app.config.catalog)
    }

    func putProducts(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        let catalog = try await RequestBody.decode(Catalog.self, request, context: context)
        var config = app.config
        config.catalog = catalog
        try await save(config, app: app)
        return try JSONResponse.make(catalog)
    }

    struct EntitlementView: Encodable { var id: String; var productIds: [String] }

    func getEntitlements(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        var products: [String: [String]] = [:]
        for product in app.config.catalog.products {
            for entitlement in product.entitlements { products[entitlement, default: []].append(product.id) }
        }
        let list = products.keys.sorted().map { EntitlementView(id: $0, productIds: products[$0]?.sorted() ?? []) }
        return try JSONResponse.make(["entitlements": list])
    }

    struct RotateBody: Decodable { var kind: String }
    struct RotatedKey: Encodable { var kind: String; var key: String; var revoked: Int }

    /// Issues a new key of one kind and revokes the old ones of that kind at once.
    func rotateKey(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        let body = try await RequestBody.decode(RotateBody.self, request, context: context)
        let kind: APIKeyRecord.Kind
        switch body.kind {
        case "public": kind = .public
        case "secret": kind = .secret
        default: throw APIError.invalidRequest("kind is public or secret")
        }
        let generated = APIKeys.generate(kind: kind.prefix)
        let now = ingestion.nowMs
        let revoked = try await ingestion.database.writing { session in
            let revoked = try await session.revokeKeys(app: app.id, kind: kind, at: now)
            try await session.insertKey(APIKeyRecord(keyId: generated.id, appId: app.id, kind: kind, secretHash: generated.secretHash, createdAt: now))
            return revoked
        }
        registry.invalidate(app: app.id)
        return try JSONResponse.make(RotatedKey(kind: body.kind, key: generated.key, revoked: revoked), status: .created)
    }

    func appEvents(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        let page = try EventPage.Query(request)
        let records = try await ingestion.database.reading {
            try await $0.events(app: app.id, after: page.after, limit: page.limit)
        }
        return try EventPage.response(records, after: page.after)
    }

    struct AuditView: Encodable {
        var seq: Int64?
        var action: String
        var originalTransactionId: String?
        var fromCustomer: String?
        var toCustomer: String?
        var detail: String
        var at: Int64
    }

    func audit(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin, appId: try Self.appId(context))
        let rows = try await ingestion.database.reading { try await $0.audit(app: app.id, limit: 1000) }
        return try JSONResponse.make(["audit": rows.map {
            AuditView(seq: $0.seq, action: $0.action, originalTransactionId: $0.originalTransactionId, fromCustomer: $0.fromCustomer,
                      toCustomer: $0.toCustomer, detail: $0.detail, at: $0.at)
        }])
    }
}
