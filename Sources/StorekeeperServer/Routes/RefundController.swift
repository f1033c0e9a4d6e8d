import AppStore
import Entitlements
import Hummingbird
import Storage
import StorekeeperCore

/// Refund requests: what the app reports of a customer (`POST /v1/customers/{appUserId}/consumption`, any key), and the
/// team's policy, overrides, requests and decisions under `/v1/apps/{appId}` (secret key).
struct RefundController {
    let core: StorekeeperCore

    var customerRoutes: RouteCollection<CustomerContext> {
        let routes = RouteCollection(context: CustomerContext.self)
        routes.post(":appUserId/consumption", use: postConsumption)
        return routes
    }

    var adminRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("refund-policy", use: getPolicy)
        routes.put("refund-policy", use: putPolicy)
        routes.delete("refund-policy", use: deletePolicy)
        routes.get("refund-requests", use: listRequests)
        routes.post("refund-requests/:requestId/decision", use: decide)
        routes.put("customers/:appUserId/refund-override", use: putOverride)
        return routes
    }

    @Sendable func postConsumption(_ request: Request, context: CustomerContext) async throws -> ConsumptionReport {
        let body = try await request.decode(as: ConsumptionReportBody.self, context: context)
        return try await core.refundRequests.report(
            body.report, appUserId: try CustomerController.appUserId(context), app: context.caller.app)
    }

    @Sendable func getPolicy(_ request: Request, context: AdminContext) async throws -> RefundPolicy {
        guard let policy = core.refundRequests.policy(of: context.app) else {
            throw CoreError.notFound("the app has no refund policy: refund requests are recorded and not answered")
        }
        return policy
    }

    @Sendable func putPolicy(_ request: Request, context: AdminContext) async throws -> RefundPolicy {
        let body = try await request.decode(as: RefundPolicyBody.self, context: context)
        try await core.refundRequests.setPolicy(body.policy, of: context.app)
        return body.policy
    }

    @Sendable func deletePolicy(_ request: Request, context: AdminContext) async throws -> Response {
        try await core.refundRequests.setPolicy(nil, of: context.app)
        return Response(status: .noContent)
    }

    struct RequestList: ResponseEncodable { var requests: [RefundRequestView] }

    @Sendable func listRequests(_ request: Request, context: AdminContext) async throws -> RequestList {
        let environment = try context.app.environment(request.uri.queryParameters.get("environment"))
        var status: RefundRequestRecord.Status?
        if let given = request.uri.queryParameters.get("status") {
            guard let known = RefundRequestRecord.Status(rawValue: given) else {
                throw CoreError.invalidInput(
                    field: "status", "one of \(RefundRequestRecord.Status.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            status = known
        }
        return RequestList(requests: try await core.refundRequests.list(app: context.app, environment: environment, status: status))
    }

    @Sendable func decide(_ request: Request, context: AdminContext) async throws -> RefundRequestView {
        let body = try await request.decode(as: PreferenceBody.self, context: context)
        let id = try context.parameters.require("requestId")
        return try await core.refundRequests.decide(id, preference: body.preference, by: "api (secret key)", app: context.app)
    }

    @Sendable func putOverride(_ request: Request, context: AdminContext) async throws -> ConsumptionReport {
        let body = try await request.decode(as: PreferenceBody.self, context: context)
        return try await core.refundRequests.setOverride(
            body.preference, appUserId: try CustomerController.appUserId(context), app: context.app)
    }
}

/// `{"preference": "DECLINE" | "GRANT_FULL" | "GRANT_PRORATED" | null}`: null answers (or overrides) without a preference.
struct PreferenceBody: Decodable {
    var preference: RefundPreference?

    enum CodingKeys: String, CodingKey, CaseIterable { case preference }

    init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, CodingKeys.self, what: "a refund preference")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard c.contains(.preference) else {
            throw CoreError.invalidInput(field: "preference", "preference is required (null for no preference)")
        }
        preference = try c.decodeNil(forKey: .preference) ? nil : try c.decode(RefundPreference.self, forKey: .preference)
        try RefundPolicy.check(preference, field: "preference")
    }
}

/// The app's report, unknown fields and nulls refused (a null would read as "keep the stored value").
struct ConsumptionReportBody: Decodable {
    var report: ConsumptionReport

    init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, ConsumptionReport.CodingKeys.self, what: "a consumption report")
        try StrictBody.refuseNulls(in: decoder, except: [])
        report = try ConsumptionReport(from: decoder)
    }
}

/// A refund policy, unknown fields refused in it and in each rule.
struct RefundPolicyBody: Decodable {
    var policy: RefundPolicy

    enum RulesKey: String, CodingKey { case rules }

    init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, RefundPolicy.CodingKeys.self, what: "a refund policy")
        try StrictBody.refuseNulls(in: decoder, except: ["defaultPreference"])
        let c = try decoder.container(keyedBy: RulesKey.self)
        if c.contains(.rules), var rules = try? c.nestedUnkeyedContainer(forKey: .rules) {
            var index = 0
            while !rules.isAtEnd {
                let rule = try rules.superDecoder()
                if let unknown = UnknownFields.first(in: rule, notIn: RefundRule.CodingKeys.self) {
                    throw CoreError.invalidInput(field: "rules[\(index)].\(unknown)", "'\(unknown)' is not a field of a refund rule")
                }
                try StrictBody.refuseNulls(in: rule, except: ["preference"], path: "rules[\(index)].")
                index += 1
            }
        }
        policy = try RefundPolicy(from: decoder)
    }
}

extension RefundPolicy: ResponseEncodable {}
extension ConsumptionReport: ResponseEncodable {}
extension RefundRequestView: ResponseEncodable {}
