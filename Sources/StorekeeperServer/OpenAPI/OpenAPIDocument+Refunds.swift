import AppStore
import OpenAPIKit
import Storage
import StorekeeperCore

/// Refund requests: the app's consumption reports, and the team's policy, overrides, requests and decisions.
extension OpenAPIDocument {
    static let refundPreferenceSchema = JSONSchema.string(allowedValues: RefundPreference.known.map { .init($0.rawValue) })
    /// A preference or null (no preference): an enum's values do not include null, so the two are alternatives.
    static func nullablePreference(required: Bool) -> JSONSchema {
        .one(of: [refundPreferenceSchema, .null()], core: .init(required: required))
    }
    static let purchaseDeliverySchema = JSONSchema.string(allowedValues: PurchaseDeliveryStatus.known.map { .init($0.rawValue) })

    static func refundRuleSchema() -> JSONSchema {
        let hours = JSONSchema.number(required: false, minimum: (0, exclusive: false))
        let count = JSONSchema.integer(required: false, minimum: (0, exclusive: false))
        return .object(
            properties: [
                "name": .string(minLength: 1, maxLength: 100),
                "preference": nullablePreference(required: false),
                "productTypes": .array(
                    required: false,
                    items: .string(allowedValues: ProductType.known.map { .init($0.rawValue) })),
                "productIds": .array(required: false, items: .string),
                "reasons": .array(
                    required: false,
                    items: .string(allowedValues: [
                        "UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
                    ])),
                "minHoursSincePurchase": hours, "maxHoursSincePurchase": hours,
                "minLifetimeSpendUSD": hours, "maxLifetimeSpendUSD": hours,
                "minRefundsBefore": count, "maxRefundsBefore": count,
                "entitlementUsed": .boolean(required: false),
            ],
            additionalProperties: .a(false)
        ).with(description: "Every condition given must hold; the first rule that matches decides.")
    }

    static func refundPolicySchema(response: Bool) -> JSONSchema {
        .object(
            properties: [
                "rules": .array(required: response, items: refundRuleSchema()),
                "defaultPreference": nullablePreference(required: false),
                "holdMinutes": .integer(
                    required: response, maximum: (RefundPolicy.maxHoldMinutes, exclusive: false), minimum: (0, exclusive: false)),
                "sampleContentProvided": .boolean(required: response),
            ],
            additionalProperties: .a(false))
    }

    static func consumptionReportSchema(response: Bool) -> JSONSchema {
        var properties: OrderedDictionary<String, JSONSchema> = [
            "customerConsented": .boolean(required: false),
            "entitlementUsed": .boolean(required: false),
            "consumptionPercentage": .integer(required: false, maximum: (100_000, exclusive: false), minimum: (0, exclusive: false)),
            "deliveryStatus": purchaseDeliverySchema.optionalSchemaObject(),
            "sampleContentProvided": .boolean(required: false),
        ]
        if response { properties["refundPreferenceOverride"] = refundPreferenceSchema.optionalSchemaObject() }
        return .object(properties: properties, additionalProperties: .a(false))
    }

    static let refundRequestSchema = JSONSchema.object(
        properties: [
            "id": .string, "customerId": .string, "environment": .string, "transactionId": .string, "originalTransactionId": .string,
            "productId": .string, "productType": .string(required: false), "reason": .string(required: false),
            "requestedAt": .integer, "deadlineAt": .integer,
            "status": .string(allowedValues: RefundRequestRecord.Status.allCases.map { .init($0.rawValue) }),
            "held": .boolean, "dueAt": .integer, "preference": refundPreferenceSchema.optionalSchemaObject(), "decidedBy": .string,
            "note": .string(required: false), "attempts": .integer, "lastError": .string(required: false),
            "appleStatus": .integer(required: false), "answeredAt": .integer(required: false), "body": .string(required: false),
            "outcome": .string(required: false, allowedValues: RefundOutcome.allCases.map { .init($0.rawValue) }),
            "outcomeAt": .integer(required: false),
        ])

    static let preferenceBodySchema = JSONSchema.object(
        properties: ["preference": nullablePreference(required: true)], additionalProperties: .a(false))

    static var refundPaths: OpenAPI.PathItem.Map {
        let app = [parameter("AppId")]
        return [
            "/v1/customers/{appUserId}/consumption": .init(
                post: .init(
                    summary: "What the app reports of a customer for refund requests: consent, usage, delivery (public or secret key).",
                    description:
                        "Fields absent keep their stored value. Without customerConsented true no answer to a refund request is "
                        + "ever sent for the customer; consent given later sends the answers still inside Apple's window.",
                    parameters: [parameter("AppUserId")],
                    requestBody: body(consumptionReportSchema(response: false)),
                    responses: merged(
                        [200: json("What is stored for the app user id.", consumptionReportSchema(response: true))], errors(413),
                        customerErrors))),
            "/v1/apps/{appId}/refund-policy": .init(
                get: .init(
                    summary: "The app's refund policy (secret key); 404 when it has none.", parameters: app,
                    responses: merged([200: json("The policy.", refundPolicySchema(response: true))], adminErrors)),
                put: .init(
                    summary: "Sets the app's refund policy (secret key).",
                    description:
                        "Ordered rules over the request and the customer (product type and id, Apple's reason, hours since the "
                        + "purchase, lifetime spend net of refunds in USD, refunds before, whether the entitlement was used); the first "
                        + "that matches decides, else defaultPreference. holdMinutes (at most 660) holds each answer for a person.",
                    parameters: app, requestBody: body(refundPolicySchema(response: false)),
                    responses: merged([200: json("The policy.", refundPolicySchema(response: true))], errors(400, 413), adminErrors)),
                delete: .init(
                    summary: "Removes the app's refund policy: requests are recorded and not answered (secret key).", parameters: app,
                    responses: merged([204: .response(description: "Removed.")], adminErrors))),
            "/v1/apps/{appId}/refund-requests": .init(
                get: .init(
                    summary: "The app's refund requests in one environment, newest first (secret key).",
                    parameters: app + [
                        parameter("Environment"),
                        query(
                            "status", .string(allowedValues: RefundRequestRecord.Status.allCases.map { .init($0.rawValue) }),
                            "Only this status."),
                    ],
                    responses: merged(
                        [200: json("The requests.", .object(properties: ["requests": .array(items: refundRequestSchema)]))], errors(400),
                        adminErrors))),
            "/v1/apps/{appId}/refund-requests/{requestId}/decision": .init(
                post: .init(
                    summary: "A person's answer to a request not answered yet: sent at once, with the customer's consent (secret key).",
                    parameters: app + [
                        .parameter(
                            .init(
                                name: "requestId", context: .path(schema: .string(minLength: 1)),
                                description: "The request's id (its notification's UUID)."))
                    ],
                    requestBody: body(preferenceBodySchema),
                    responses: merged([200: json("The request.", refundRequestSchema)], errors(400, 409, 413), adminErrors))),
            "/v1/apps/{appId}/customers/{appUserId}/refund-override": .init(
                put: .init(
                    summary: "The team's refund preference for one customer, before every rule; null removes it (secret key).",
                    parameters: app + [parameter("AppUserId")],
                    requestBody: body(preferenceBodySchema),
                    responses: merged(
                        [200: json("What is stored for the app user id.", consumptionReportSchema(response: true))], errors(400, 413),
                        adminErrors))),
        ]
    }
}
