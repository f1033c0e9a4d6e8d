import AppStore
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Storage

/// `/v1/customers/…` and `/v1/subscribers/…`: what the app (and the team's backend) reads and posts.
struct CustomerRoutes {
    let ingestion: Ingestion
    var registry: AppRegistry { ingestion.registry }

    func register(_ router: Router<ServerContext>) {
        router.get("/v1/customers/:appUserId") { request, context in try await getCustomer(request, context) }
        router.post("/v1/customers/:appUserId/transactions") { request, context in try await postTransaction(request, context) }
        router.post("/v1/customers/:appUserId/alias") { request, context in try await postAlias(request, context) }
        router.get("/v1/customers/:appUserId/events") { request, context in try await customerEvents(request, context) }
        router.get("/v1/subscribers/:appUserId") { request, context in try await subscriber(request, context) }
    }

    static func appUserId(_ context: ServerContext, posting: Bool = false) throws -> String {
        guard let raw = context.parameters.get("appUserId") else { throw APIError.invalidRequest("the app user id is missing") }
        let id = raw.removingPercentEncoding ?? raw
        guard !id.isEmpty, id.utf8.count <= 256, !id.contains(where: { $0.isNewline }) else {
            throw APIError.invalidRequest("an app user id is 1 to 256 characters on one line")
        }
        if posting, id.hasPrefix("$"), !id.hasPrefix(Self.deviceIdPrefix) {
            throw APIError.invalidRequest("app user ids starting with $ are reserved (except \(Self.deviceIdPrefix)…, the app's anonymous ids)")
        }
        return id
    }

    /// The prefix of the app's own anonymous ids (one per install, before the user signs in). Only such an id can be
    /// aliased with the public key: any other merge needs a secret key, or anyone holding the app's public key (it
    /// ships in the app) could merge a stranger's purchases, or a name the stranger will use, into their own account.
    static let deviceIdPrefix = "$device:"

    /// Customers the server named itself (`$anonymous:<originalTransactionId>`) are read with a secret key only:
    /// original transaction ids are not secrets.
    static func checkReadable(_ appUserId: String, kind: APIKeyRecord.Kind) throws {
        if kind != .secret, appUserId.hasPrefix("$anonymous:") {
            throw APIError.forbidden("customers the server named itself are read with a secret key")
        }
    }

    func getCustomer(_ request: Request, _ context: ServerContext) async throws -> Response {
        let (app, kind) = try await registry.authorizeWithKind(request, .customer)
        let appUserId = try Self.appUserId(context)
        try Self.checkReadable(appUserId, kind: kind)
        let environment = try app.environment(request.uri.queryParameters.get("environment"))
        let snapshot = try await ingestion.state(app: app, appUserId: appUserId, environment: environment).snapshot
        return try stateResponse(request, snapshot: snapshot, appUserId: appUserId, environment: environment)
    }

    /// The state's JSON with `appUserId`, `environment` and `requestDate` (server time) in front; an ETag of the
    /// state, and a Cache-Control that never outlives `nextChangeAt`.
    func stateResponse(_ request: Request, snapshot: StateSnapshot, appUserId: String, environment: AppStore.Environment, status: HTTPResponse.Status = .ok) throws -> Response {
        let now = ingestion.nowMs
        var maxAge: Int64 = 60
        if let next = snapshot.nextChangeAt { maxAge = min(maxAge, max(0, (next - now) / 1000)) }
        var headers: HTTPFields = [:]
        headers[.eTag] = snapshot.etag
        headers[.cacheControl] = maxAge > 0 ? "private, max-age=\(maxAge)" : "private, no-cache"
        if status == .ok, let match = request.headers[.ifNoneMatch],
           match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == snapshot.etag || $0.trimmingCharacters(in: .whitespaces) == "*" }) {
            return Response(status: .notModified, headers: headers)
        }
        var body: [UInt8] = []
        body.reserveCapacity(snapshot.json.count + 128)
        body += Array("{\"appUserId\":".utf8)
        body += (try? JSONEncoder.api.encode(appUserId)).map(Array.init) ?? Array("\"\"".utf8)
        body += Array(",\"environment\":\"\(environment.rawValue)\",\"requestDate\":\(now)".utf8)
        if snapshot.json.count > 2 {
            body.append(UInt8(ascii: ","))
            body += snapshot.json.dropFirst()
        } else {
            body.append(UInt8(ascii: "}"))
        }
        return JSONResponse.bytes(body, status: status, headers: headers)
    }

    func postTransaction(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .customer)
        let appUserId = try Self.appUserId(context, posting: true)
        let requested = request.uri.queryParameters.get("environment")
        var environment = try app.environment(requested)
        let posted = try await RequestBody.decode(Ingestion.PostedPurchase.self, request, context: context)
        let (customerId, purchaseEnvironment) = try await ingestion.postPurchase(app: app.id, appUserId: appUserId, posted)
        // Without ?environment=, the answer is for the environment the purchase came from.
        if requested == nil, let purchaseEnvironment { environment = purchaseEnvironment }
        let snapshot = try await ingestion.state(app: app, customerId: customerId, environment: environment)
        return try stateResponse(request, snapshot: snapshot, appUserId: appUserId, environment: environment)
    }

    struct AliasBody: Decodable { var alias: String }

    func postAlias(_ request: Request, _ context: ServerContext) async throws -> Response {
        let (app, kind) = try await registry.authorizeWithKind(request, .customer)
        let appUserId = try Self.appUserId(context, posting: true)
        let environment = try app.environment(request.uri.queryParameters.get("environment"))
        let body = try await RequestBody.decode(AliasBody.self, request, context: context)
        guard !body.alias.isEmpty, body.alias.utf8.count <= 256 else { throw APIError.invalidRequest("alias is 1 to 256 characters") }
        guard body.alias != appUserId else { throw APIError.invalidRequest("an app user id cannot be its own alias") }
        if kind != .secret, !body.alias.hasPrefix(Self.deviceIdPrefix) || appUserId.hasPrefix(Self.deviceIdPrefix) {
            throw APIError.forbidden("with the public key, only an anonymous id (\(Self.deviceIdPrefix)…) can become an alias of a signed-in user; merging other customers needs a secret key")
        }
        let customerId = try await ingestion.alias(app: app.id, appUserId: appUserId, alias: body.alias)
        let snapshot = try await ingestion.state(app: app, customerId: customerId, environment: environment)
        return try stateResponse(request, snapshot: snapshot, appUserId: appUserId, environment: environment)
    }

    func customerEvents(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin)
        let appUserId = try Self.appUserId(context)
        let page = try EventPage.Query(request)
        guard let customerId = try await ingestion.customerId(app: app.id, appUserId: appUserId) else {
            return try JSONResponse.make(EventPage(events: [], nextCursor: page.after.description))
        }
        let records = try await ingestion.database.reading { session in
            let originals = try await session.originalTransactionIds(customer: customerId)
            return try await session.events(app: app.id, originalTransactionIds: originals, after: page.after, limit: page.limit)
        }
        return try EventPage.response(records, after: page.after)
    }

    func subscriber(_ request: Request, _ context: ServerContext) async throws -> Response {
        let app = try await registry.authorize(request, .admin)
        let appUserId = try Self.appUserId(context)
        let environment = try app.environment(request.uri.queryParameters.get("environment"))
        let customerId = try await ingestion.customerId(app: app.id, appUserId: appUserId)
        let snapshot = try await ingestion.state(app: app, customerId: customerId, environment: environment)
        let firstSeen = try await customerId.asyncMap { id in try await ingestion.database.reading { try await $0.customer(id: id)?.createdAt } } ?? nil
        return try JSONResponse.make(RevenueCatSubscriber(
            state: try snapshot.state(), appUserId: appUserId, environment: environment, requestDate: ingestion.nowMs,
            firstSeen: firstSeen ?? ingestion.nowMs))
    }
}

/// A page of the event stream: `{"events": […], "nextCursor": "<seq>"}`; pass `nextCursor` back as `after`.
struct EventPage: Encodable {
    var events: [StreamEvent]
    var nextCursor: String

    struct Query {
        var after = EventCursor.start
        var limit: Int

        init(_ request: Request) throws {
            let parameters = request.uri.queryParameters
            if let text = parameters.get("after") {
                guard let cursor = EventCursor(text) else { throw APIError.invalidRequest("after must be a cursor from nextCursor") }
                after = cursor
            }
            limit = 100
            if let text = parameters.get("limit") {
                guard let value = Int(text), (1...1000).contains(value) else { throw APIError.invalidRequest("limit is 1 to 1000") }
                limit = value
            }
        }
    }

    static func response(_ records: [EventRecord], after: EventCursor) throws -> Response {
        let next = records.last.map { EventCursor(txOrder: $0.txOrder ?? 0, seq: $0.seq ?? 0) } ?? after
        return try JSONResponse.make(EventPage(
            events: try records.map { record in
                do {
                    let event = try RequestBody.decoder.decode(SubscriptionEvent.self, from: Data(record.payload.utf8))
                    return StreamEvent(event: event, cursor: EventCursor(txOrder: record.txOrder ?? 0, seq: record.seq ?? 0).description,
                                       recordedAt: record.recordedAt, retractedAt: record.retractedAt)
                } catch {
                    throw APIError.internalError("stored event \(record.eventId) does not decode")
                }
            },
            nextCursor: next.description))
    }
}

/// A stored event with its place in the stream.
struct StreamEvent: Encodable {
    var event: SubscriptionEvent
    var cursor: String
    var recordedAt: Int64
    /// Set when later facts showed that the event did not happen: undo whatever it triggered.
    var retractedAt: Int64?

    enum Extra: String, CodingKey { case cursor, recordedAt, retractedAt }

    func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: Extra.self)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(recordedAt, forKey: .recordedAt)
        try container.encode(retractedAt, forKey: .retractedAt)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
