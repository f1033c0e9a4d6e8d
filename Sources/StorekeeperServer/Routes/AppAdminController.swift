import Entitlements
import Hummingbird
import Storage
import StorekeeperCore

/// `/v1/apps/{appId}/…` with a secret key of that app: configuration, catalog, keys, events and audit.
struct AppAdminController {
    let core: StorekeeperCore
    var administration: AppAdministration { core.administration }

    var routes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get(use: getApp)
        routes.patch(use: patchApp)
        routes.get("products", use: getProducts)
        routes.put("products", use: putProducts)
        routes.get("entitlements", use: getEntitlements)
        routes.post("keys/rotate", use: rotateKey)
        routes.get("events", use: events)
        routes.get("audit", use: audit)
        return routes
    }

    @Sendable func getApp(_ request: Request, context: AdminContext) async throws -> AppConfiguration.View {
        context.app.config.view(appId: context.app.id)
    }

    /// Every field is optional; those present replace the stored ones. Secrets can be set or, with null, removed.
    @Sendable func patchApp(_ request: Request, context: AdminContext) async throws -> AppConfiguration.View {
        let patch = try await request.decode(as: AppPatch.self, context: context)
        let updated = patch.applied(to: context.app.config)
        try await administration.update(context.app, to: updated)
        return updated.view(appId: context.app.id)
    }

    /// Under `/v1/apps/{appId}`, with any key of that app: what the SDK needs to compute entitlements offline.
    var publicRoutes: RouteCollection<CustomerContext> {
        let routes = RouteCollection(context: CustomerContext.self)
        routes.get("catalog", use: publicCatalog)
        return routes
    }

    /// The app's catalog (products, groups, entitlements), as `GET products` answers it to secret keys.
    @Sendable func publicCatalog(_ request: Request, context: CustomerContext) async throws -> Catalog {
        let app = context.caller.app
        if let appId = context.parameters.get("appId"), appId != app.id { throw CoreError.appNotFound(appId: appId) }
        return app.config.catalog
    }

    @Sendable func getProducts(_ request: Request, context: AdminContext) async throws -> Catalog {
        context.app.config.catalog
    }

    @Sendable func putProducts(_ request: Request, context: AdminContext) async throws -> Catalog {
        let catalog = try await request.decode(as: WrittenCatalog.self, context: context).catalog
        try await administration.setCatalog(catalog, of: context.app)
        return catalog
    }

    struct EntitlementList: ResponseCodable { var entitlements: [EntitlementProducts] }

    @Sendable func getEntitlements(_ request: Request, context: AdminContext) async throws -> EntitlementList {
        EntitlementList(entitlements: administration.entitlements(of: context.app))
    }

    struct RotateBody: Decodable { var kind: APIKeyRecord.Kind }

    /// Issues a new key of one kind and revokes the old ones of that kind at once.
    @Sendable func rotateKey(_ request: Request, context: AdminContext) async throws -> EditedResponse<RotatedKey> {
        let body = try await request.decode(as: RotateBody.self, context: context)
        return EditedResponse(status: .created, response: try await administration.rotateKey(body.kind, of: context.app))
    }

    @Sendable func events(_ request: Request, context: AdminContext) async throws -> EventPage {
        try await administration.events(of: context.app, query: EventQuery(request))
    }

    struct AuditLog: ResponseCodable { var audit: [AuditEntry] }

    @Sendable func audit(_ request: Request, context: AdminContext) async throws -> AuditLog {
        AuditLog(audit: try await administration.audit(of: context.app).map(AuditEntry.init))
    }
}

/// One row of the audit log, as the API shows it.
struct AuditEntry: Codable, Sendable {
    var seq: Int64?
    var action: String
    var originalTransactionId: String?
    var fromCustomer: String?
    var toCustomer: String?
    var detail: String
    var at: Int64

    init(_ record: AuditRecord) {
        seq = record.seq
        action = record.action.rawValue
        originalTransactionId = record.originalTransactionId
        fromCustomer = record.fromCustomer
        toCustomer = record.toCustomer
        detail = record.detail
        at = record.at
    }
}

extension EventQuery {
    /// `?after=` and `?limit=`.
    init(_ request: Request) throws(CoreError) {
        let parameters = request.uri.queryParameters
        try self.init(after: parameters.get("after"), limit: parameters.get("limit"))
    }
}

extension AppConfiguration.View: ResponseEncodable {}
extension Catalog: ResponseEncodable {}
extension RotatedKey: ResponseEncodable {}
extension EventPage: ResponseEncodable {}
