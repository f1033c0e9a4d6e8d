import Entitlements
import Integrations
import OpenAPIKit
import Storage
import StorekeeperCore

/// The integrations' operations: destinations of an app's events, and their deliveries.
extension OpenAPIDocument {
    static let integrationKindSchema = JSONSchema.string(allowedValues: DestinationKind.allCases.map { .init($0.rawValue) })
    static let eventTypeSchema = JSONSchema.string(allowedValues: SubscriptionEventType.allCases.map { .init($0.rawValue) })
    static let retryScheduleSchema = JSONSchema.array(
        required: false, nullable: true, maxItems: RetrySchedule.maximumRetries,
        items: .integer(maximum: (Int(RetrySchedule.maximumDelay), exclusive: false), minimum: (0, exclusive: false))
    ).with(description: "Seconds to wait after each failed attempt (null: the Standard Webhooks schedule, about three days).")

    static let integrationViewSchema = JSONSchema.object(
        properties: [
            "id": .string, "kind": integrationKindSchema, "name": .string,
            "config": .object(additionalProperties: .b(.string)).with(description: "The readable fields; secrets are never shown."),
            "secretsConfigured": .array(items: .string),
            "events": .array(required: false, nullable: true, items: .string),
            "environments": .array(items: .string),
            "enabled": .boolean,
            "disabledReason": .string(required: false, nullable: true),
            "retrySchedule": .array(required: false, nullable: true, items: .integer),
            "createdAt": .integer, "updatedAt": .integer,
            "signingSecret": .string(
                required: false, description: "A webhook's whsec_… secret: only in the answer that creates it or rotates it."),
        ])

    static let integrationBodySchema = JSONSchema.object(
        properties: [
            "kind": integrationKindSchema.with(description: "Required to create; cannot change."),
            "name": .string(
                required: false, minLength: 1, maxLength: IntegrationAdministration.maxNameLength, pattern: "^[^\(refusedClass)]+$"),
            "config": .object(
                required: false,
                additionalProperties: .b(.one(of: [.string(minLength: 1), .integer, .null()]))
            ).with(
                description:
                    "webhook: url, authorization (secret). slack: url (secret). telegram: botToken (secret), chatId, baseURL. "
                    + "amplitude: apiKey (secret), region, baseURL, preset. mixpanel: projectToken (secret), projectId, "
                    + "serviceAccountUsername, serviceAccountSecret (secret), region, baseURL, preset. In a change, null removes a field."
            ),
            "events": .array(required: false, nullable: true, minItems: 1, items: eventTypeSchema).with(
                description: "The types sent (null: every type)."),
            "environments": .array(required: false, minItems: 1, items: environmentInputSchema).with(description: "Default: Production."),
            "enabled": .boolean(required: false),
            "retrySchedule": retryScheduleSchema,
        ],
        additionalProperties: .a(false))

    static let deliveryViewSchema = JSONSchema.object(
        properties: [
            "id": .string, "eventId": .string, "retraction": .boolean,
            "status": .string(allowedValues: DeliveryStatus.allCases.map { .init($0.rawValue) }),
            "attempts": .integer, "nextAttemptAt": .integer(required: false), "firstAttemptAt": .integer(required: false),
            "createdAt": .integer, "updatedAt": .integer, "lastStatus": .integer(required: false),
            "lastResponse": .string(required: false), "lastLatencyMs": .integer(required: false), "lastError": .string(required: false),
        ])

    static let integrationIdParameter = Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter>.parameter(
        .init(name: "integrationId", context: .path(schema: .string(minLength: 1)), description: "The integration's id (int_…)."))

    static var integrationPaths: OpenAPI.PathItem.Map {
        let one = [parameter("AppId"), integrationIdParameter]
        return [
            "/v1/apps/{appId}/integrations": .init(
                get: .init(
                    summary: "The app's destinations, oldest first (secret key).",
                    parameters: [parameter("AppId")],
                    responses: merged(
                        [200: json("The destinations.", .object(properties: ["integrations": .array(items: ref("Integration"))]))],
                        adminErrors)),
                post: .init(
                    summary: "Adds a destination of the app's events: webhook, slack, telegram, amplitude or mixpanel (secret key).",
                    description:
                        "Secrets in config are stored apart and never shown again; a webhook's signing secret is answered once. "
                        + "Every event recorded from now on (and every retraction) gets a delivery, written with the event.",
                    parameters: [parameter("AppId")],
                    requestBody: body(integrationBodySchema),
                    responses: merged([201: json("The destination.", ref("Integration"))], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}": .init(
                get: .init(
                    summary: "One destination, without its secrets (secret key).", parameters: one,
                    responses: merged([200: json("The destination.", ref("Integration"))], adminErrors)),
                delete: .init(
                    summary: "Deletes a destination and its deliveries (secret key).", parameters: one,
                    responses: merged([204: .response(description: "Deleted.")], adminErrors)),
                patch: .init(
                    summary: "Changes a destination: present fields replace stored ones (secret key).",
                    description: "Enabling a destination clears the reason it was disabled for; its waiting deliveries flow again.",
                    parameters: one, requestBody: body(integrationBodySchema),
                    responses: merged([200: json("The destination.", ref("Integration"))], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}/test": .init(
                post: .init(
                    summary: "Sends a test message now and answers what the destination said (secret key).", parameters: one,
                    responses: merged(
                        [
                            200: json(
                                "The destination's answer (secrets removed).",
                                .object(
                                    properties: [
                                        "delivered": .boolean, "status": .integer(required: false), "response": .string(required: false),
                                        "error": .string(required: false), "latencyMs": .integer,
                                    ]))
                        ], adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}/secret/rotate": .init(
                post: .init(
                    summary: "A new webhook signing secret, answered once; the old one also signs for 24 hours (secret key).",
                    parameters: one,
                    responses: merged([200: json("The webhook with its new secret.", ref("Integration"))], errors(400), adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}/deliveries": .init(
                get: .init(
                    summary: "The destination's deliveries, newest first (secret key).",
                    parameters: one + [
                        query("status", .string(allowedValues: DeliveryStatus.allCases.map { .init($0.rawValue) }), "Only this status."),
                        query("after", .string(pattern: "^[1-9][0-9]{0,17}$"), "The nextCursor of the previous page."),
                        query(
                            "limit",
                            .integer(
                                maximum: (IntegrationAdministration.deliveryPageLimits.upperBound, exclusive: false),
                                minimum: (IntegrationAdministration.deliveryPageLimits.lowerBound, exclusive: false), defaultValue: 100),
                            "Deliveries per page."),
                    ],
                    responses: merged(
                        [
                            200: json(
                                "A page of deliveries.",
                                .object(
                                    properties: [
                                        "deliveries": .array(items: ref("Delivery")), "nextCursor": .string(required: false),
                                    ]))
                        ], errors(400), adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}/deliveries/{deliveryId}/retry": .init(
                post: .init(
                    summary: "Sends one delivery again now, with a fresh schedule and the same id (secret key).",
                    parameters: one + [
                        .parameter(.init(name: "deliveryId", context: .path(schema: .string(minLength: 1)), description: "msg_…"))
                    ],
                    responses: merged([200: json("The delivery.", ref("Delivery"))], adminErrors))),
            "/v1/apps/{appId}/integrations/{integrationId}/replay": .init(
                post: .init(
                    summary: "Sends again the deliveries created in [from, to), the dead ones or all, with their ids (secret key).",
                    parameters: one,
                    requestBody: body(
                        .object(
                            properties: [
                                "from": .integer(description: "Epoch ms."), "to": .integer(description: "Epoch ms, after from."),
                                "status": .string(required: false, allowedValues: "dead", "all"),
                            ])),
                    responses: merged(
                        [200: json("How many were replayed.", .object(properties: ["replayed": .integer]))], errors(400, 413),
                        adminErrors))),
        ]
    }
}
