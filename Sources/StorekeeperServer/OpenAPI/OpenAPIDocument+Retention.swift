import AppStore
import OpenAPIKit
import StorekeeperCore

/// Retention messaging: Apple's Get Retention Message requests, the team's policy and the requests answered.
extension OpenAPIDocument {
    static let realtimeResponseSchema = JSONSchema.object(
        properties: [
            "message": .object(required: false, properties: ["messageIdentifier": .string(format: .uuid)]),
            "alternateProduct": .object(
                required: false,
                properties: [
                    "messageIdentifier": .string(format: .uuid), "productId": .string,
                    "billingPlanType": .string(required: false),
                ]),
            "promotionalOffer": .object(
                required: false,
                properties: ["messageIdentifier": .string(format: .uuid), "promotionalOfferSignatureV2": .string]),
        ],
        additionalProperties: .a(false)
    ).with(description: "Apple's RealtimeResponseBody: at most one of the three; empty for Apple's default message.")

    static func retentionAnswerSchema(required: Bool) -> JSONSchema {
        .object(
            required: required,
            properties: [
                "type": .string(allowedValues: RetentionAnswer.Kind.allCases.map { .init($0.rawValue) }),
                "messageIdentifier": .string(format: .uuid, required: false),
                "productId": .string(required: false, minLength: 1),
                "billingPlanType": .string(required: false, allowedValues: ["MONTHLY"]),
                "offerIdentifier": .string(required: false, minLength: 1),
            ],
            additionalProperties: .a(false)
        ).with(
            description:
                "message, alternateProduct (productId) or promotionalOffer (offerIdentifier, signed with the app's offerSigningKey), "
                + "each naming an approved message; none: Apple's default message.")
    }

    static func retentionRuleSchema() -> JSONSchema {
        let days = JSONSchema.number(required: false, minimum: (0, exclusive: false))
        return .object(
            properties: [
                "name": .string(minLength: 1, maxLength: 100),
                "answer": retentionAnswerSchema(required: true),
                "productIds": .array(required: false, items: .string),
                "locales": .array(required: false, items: .string(minLength: 1)),
                "periodTypes": .array(
                    required: false, items: .string(allowedValues: ["trial", "intro", "promo", "offerCode", "winBack", "regular"])),
                "statuses": .array(
                    required: false, items: .string(allowedValues: ["active", "gracePeriod", "billingRetry", "expired", "revoked"])),
                "minDaysSubscribed": days, "maxDaysSubscribed": days,
                "minLifetimeSpendUSD": days, "maxLifetimeSpendUSD": days,
            ],
            additionalProperties: .a(false)
        ).with(description: "Every condition given must hold; the first rule that matches decides.")
    }

    static func retentionPolicySchema(response: Bool) -> JSONSchema {
        .object(
            properties: [
                "rules": .array(required: response, items: retentionRuleSchema()),
                "defaultAnswer": retentionAnswerSchema(required: false),
            ],
            additionalProperties: .a(false))
    }

    static let retentionRequestSchema = JSONSchema.object(
        properties: [
            "requestIdentifier": .string, "environment": .string, "originalTransactionId": .string,
            "customerId": .string(required: false), "productId": .string, "userLocale": .string, "answer": realtimeResponseSchema,
            "decidedBy": .string, "signedDate": .integer, "answeredAt": .integer,
        ])

    static var retentionPaths: OpenAPI.PathItem.Map {
        let app = [parameter("AppId")]
        return [
            "/v1/apps/{appId}/retention/appstore": .init(
                post: .init(
                    summary: "Apple's Get Retention Message request (configure it with `storekeeper retention realtime-url set`). No key.",
                    description:
                        "The signed request is checked against the app's roots, appAppleId and environments. A split test on the "
                        + "placement cancel decides for the customers it includes (the variant paywall's config.retention), the "
                        + "retention policy for the others. A request Apple repeats gets its first answer.",
                    parameters: app,
                    requestBody: body(
                        .object(properties: ["signedPayload": .string(description: "The request, a JWS.", minLength: 1)])),
                    responses: merged(
                        [200: json("The message to show.", realtimeResponseSchema)], errors(400, 403, 404, 409, 413, 503)),
                    security: [])),
            "/v1/apps/{appId}/retention-policy": .init(
                get: .init(
                    summary: "The app's retention policy (secret key); 404 when it has none.", parameters: app,
                    responses: merged([200: json("The policy.", retentionPolicySchema(response: true))], adminErrors)),
                put: .init(
                    summary: "Sets the app's retention policy (secret key).",
                    description:
                        "Ordered rules over Apple's request and the customer (product, locale, the subscription's period type and "
                        + "state, days subscribed, lifetime spend net of refunds in USD); the first that matches decides, else "
                        + "defaultAnswer, else Apple's default message.",
                    parameters: app, requestBody: body(retentionPolicySchema(response: false)),
                    responses: merged([200: json("The policy.", retentionPolicySchema(response: true))], errors(400, 413), adminErrors)),
                delete: .init(
                    summary: "Removes the app's retention policy: Apple shows its default message (secret key).", parameters: app,
                    responses: merged([204: .response(description: "Removed.")], adminErrors))),
            "/v1/apps/{appId}/retention-requests": .init(
                get: .init(
                    summary: "Apple's retention requests in one environment and what was answered, newest first (secret key).",
                    parameters: app + [parameter("Environment")],
                    responses: merged(
                        [200: json("The requests.", .object(properties: ["requests": .array(items: retentionRequestSchema)]))],
                        errors(400), adminErrors))),
        ]
    }
}
