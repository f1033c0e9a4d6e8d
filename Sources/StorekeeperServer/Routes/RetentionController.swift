import AppStore
import Entitlements
import Hummingbird
import StorekeeperCore

/// Retention messaging: Apple's Get Retention Message requests (`POST /v1/apps/{appId}/retention/appstore`, no key:
/// the signature is the proof), and the team's policy and the requests answered under `/v1/apps/{appId}` (secret key).
struct RetentionController {
    let core: StorekeeperCore

    var appleRoutes: RouteCollection<ServerContext> {
        let routes = RouteCollection(context: ServerContext.self)
        routes.post("/v1/apps/:appId/retention/appstore", use: realtime)
        return routes
    }

    var adminRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("retention-policy", use: getPolicy)
        routes.put("retention-policy", use: putPolicy)
        routes.delete("retention-policy", use: deletePolicy)
        routes.get("retention-requests", use: listRequests)
        return routes
    }

    struct SignedPayloadBody: Decodable { var signedPayload: String }

    @Sendable func realtime(_ request: Request, context: ServerContext) async throws -> RealtimeResponseBody {
        // An unknown app is 404 before the body is read.
        let app = try await core.apps.app(id: context.parameters.get("appId") ?? "")
        let body = try await request.decode(as: SignedPayloadBody.self, context: context)
        return try await core.retention.answer(body.signedPayload, app: app)
    }

    @Sendable func getPolicy(_ request: Request, context: AdminContext) async throws -> RetentionPolicy {
        guard let policy = core.retention.policy(of: context.app) else {
            throw CoreError.notFound("the app has no retention policy: Apple shows its default message")
        }
        return policy
    }

    @Sendable func putPolicy(_ request: Request, context: AdminContext) async throws -> RetentionPolicy {
        let body = try await request.decode(as: RetentionPolicyBody.self, context: context)
        try await core.retention.setPolicy(body.policy, of: context.app)
        return body.policy
    }

    @Sendable func deletePolicy(_ request: Request, context: AdminContext) async throws -> Response {
        try await core.retention.setPolicy(nil, of: context.app)
        return Response(status: .noContent)
    }

    struct RequestList: ResponseEncodable { var requests: [RetentionRequestView] }

    @Sendable func listRequests(_ request: Request, context: AdminContext) async throws -> RequestList {
        let environment = try context.app.environment(request.uri.queryParameters.get("environment"))
        return RequestList(requests: try await core.retention.requests(app: context.app, environment: environment))
    }
}

extension RealtimeResponseBody: ResponseEncodable {}
extension RetentionPolicy: ResponseEncodable {}

/// A retention policy, unknown fields refused in it, its default answer, each rule and each rule's answer (the API's
/// body, and the file `storekeeper retention policy set` reads: a misspelt condition would otherwise match everyone).
public struct RetentionPolicyBody: Decodable {
    public var policy: RetentionPolicy

    enum Keys: String, CodingKey { case rules, defaultAnswer, answer }

    public init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, RetentionPolicy.CodingKeys.self, what: "a retention policy")
        try StrictBody.refuseNulls(in: decoder, except: [])
        let c = try decoder.container(keyedBy: Keys.self)
        try Self.checkAnswer(in: c, path: "defaultAnswer")
        if c.contains(.rules), var rules = try? c.nestedUnkeyedContainer(forKey: .rules) {
            var index = 0
            while !rules.isAtEnd {
                let rule = try rules.superDecoder()
                if let unknown = UnknownFields.first(in: rule, notIn: RetentionRule.CodingKeys.self) {
                    throw CoreError.invalidInput(field: "rules[\(index)].\(unknown)", "'\(unknown)' is not a field of a retention rule")
                }
                try StrictBody.refuseNulls(in: rule, except: [], path: "rules[\(index)].")
                if let fields = try? rule.container(keyedBy: Keys.self) {
                    try Self.checkAnswer(in: fields, path: "rules[\(index)].answer", key: .answer)
                }
                index += 1
            }
        }
        policy = try RetentionPolicy(from: decoder)
    }
}

extension RetentionPolicyBody {
    /// Refuses an unknown field or a null in the answer at `key`, naming it by `path`.
    fileprivate static func checkAnswer(in container: KeyedDecodingContainer<Keys>, path: String, key: Keys = .defaultAnswer) throws {
        guard container.contains(key), let answer = try? container.superDecoder(forKey: key) else { return }
        if let unknown = UnknownFields.first(in: answer, notIn: RetentionAnswer.CodingKeys.self) {
            throw CoreError.invalidInput(field: "\(path).\(unknown)", "'\(unknown)' is not a field of a retention answer")
        }
        try StrictBody.refuseNulls(in: answer, except: [], path: path + ".")
    }
}
