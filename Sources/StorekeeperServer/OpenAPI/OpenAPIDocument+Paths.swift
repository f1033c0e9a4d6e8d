import OpenAPIKit

/// Every operation, with every status it can answer.
extension OpenAPIDocument {
    typealias Responses = OpenAPI.Response.Map

    /// The error response under each of `codes`.
    static func errors(_ codes: Int...) -> Responses {
        var map = Responses()
        for code in codes { map[.status(code: code)] = .reference(.component(named: "Error")) }
        return map
    }

    static func json(_ description: String, _ schema: JSONSchema) -> Either<OpenAPI.Reference<OpenAPI.Response>, OpenAPI.Response> {
        .response(description: description, content: [.json: .content(.init(schema: schema))])
    }

    static func body(_ schema: JSONSchema) -> OpenAPI.Request { .init(content: [.json: .content(.init(schema: schema))], required: true) }

    static func parameter(_ name: String) -> Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter> {
        .reference(.component(named: name))
    }

    static func merged(_ maps: Responses...) -> Responses {
        var all = Responses()
        for map in maps { for (code, response) in map { all[code] = response } }
        return all
    }

    /// Admin endpoints: a secret key of the app in the path.
    static let adminErrors = errors(401, 403, 404, 503)
    /// Customer endpoints: any key of the app; the id, the environment or the body can be wrong.
    static let customerErrors = errors(400, 401, 403, 503)

    static var paths: OpenAPI.PathItem.Map {
        [
            "/health": .init(
                get: .init(
                    summary: "Whether the server and its database answer.",
                    responses: [
                        200: json("Healthy.", healthSchema),
                        503: json("The database does not answer.", healthSchema),
                    ],
                    security: [])),
            "/ping": .init(
                get: .init(
                    summary: "Answers pong and does nothing else (the benchmarks' yardstick).",
                    responses: [200: .response(description: "pong", content: [.txt: .content(.init(schema: .string))])],
                    security: [])),
            "/metrics": .init(
                get: .init(
                    summary: "Prometheus metrics: requests and latency, notifications by type and result, verification failures.",
                    description: "Open to anyone unless STOREKEEPER_OPERATOR_TOKEN is set; then only with it.",
                    responses: merged(
                        [200: .response(description: "Prometheus text format.", content: [.txt: .content(.init(schema: .string))])],
                        errors(401)),
                    security: [[:], [.component(named: "operatorToken"): []]])),
            "/openapi.yaml": .init(
                get: .init(
                    summary: "This document.",
                    description: "Open to anyone unless STOREKEEPER_OPERATOR_TOKEN is set; then only with it.",
                    responses: merged(
                        [200: .response(description: "OpenAPI 3.1, YAML.", content: [.yaml: .content(.init(schema: .string))])],
                        errors(401)),
                    security: [[:], [.component(named: "operatorToken"): []]])),
            "/v1/apps/{appId}/notifications/appstore": .init(
                post: .init(
                    summary:
                        "App Store Server Notifications V2 (Apple's webhook). No key: the signature is checked against the app's roots.",
                    description:
                        "200 only after the commit. 4xx: Apple's signature, app or environment does not match (Apple does not retry). "
                        + "503: the database or an OCSP responder did not answer (Apple retries).",
                    parameters: [parameter("AppId")],
                    requestBody: body(
                        .object(properties: ["signedPayload": .string(description: "The notification, a JWS.", minLength: 1)])),
                    responses: merged(
                        [
                            200: json(
                                "Stored and applied (or already stored).",
                                .object(properties: ["result": .string(allowedValues: "applied", "stored", "duplicate")]))
                        ],
                        errors(400, 403, 404, 413, 503)),
                    security: [])),
            "/v1/apps/{appId}": .init(
                get: .init(
                    summary: "The app's configuration, without its secrets (secret key).",
                    parameters: [parameter("AppId")],
                    responses: merged([200: json("The configuration.", ref("AppView"))], adminErrors)),
                patch: .init(
                    summary: "Changes the app's configuration: present fields replace stored ones, null removes a secret (secret key).",
                    description: "The bundle id cannot change, and an unknown field is refused (400), so that a typo is not ignored.",
                    parameters: [parameter("AppId")],
                    requestBody: body(appPatchSchema),
                    responses: merged([200: json("The new configuration.", ref("AppView"))], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/products": .init(
                get: .init(
                    summary: "The product catalog (secret key).",
                    parameters: [parameter("AppId")],
                    responses: merged([200: json("The catalog.", ref("Catalog"))], adminErrors)),
                put: .init(
                    summary: "Replaces the product catalog, and with it the entitlements (secret key).",
                    parameters: [parameter("AppId")],
                    requestBody: body(ref("Catalog")),
                    responses: merged([200: json("The catalog.", ref("Catalog"))], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/catalog": .init(
                get: .init(
                    summary: "The product catalog, for the SDK's offline entitlements (public or secret key of the app).",
                    parameters: [parameter("AppId")],
                    responses: merged([200: json("The catalog.", ref("Catalog"))], adminErrors))),
            "/v1/apps/{appId}/entitlements": .init(
                get: .init(
                    summary: "The entitlements and the products that grant each (secret key).",
                    parameters: [parameter("AppId")],
                    responses: merged(
                        [
                            200: json(
                                "The entitlements.",
                                .object(
                                    properties: [
                                        "entitlements": .array(
                                            items: .object(properties: ["id": .string, "productIds": .array(items: .string)]))
                                    ]))
                        ], adminErrors))),
            "/v1/apps/{appId}/keys/rotate": .init(
                post: .init(
                    summary: "Issues a new public or secret key and revokes the old ones of that kind (secret key).",
                    parameters: [parameter("AppId")],
                    requestBody: body(.object(properties: ["kind": .string(allowedValues: "public", "secret")])),
                    responses: merged(
                        [
                            201: json(
                                "The new key, shown once.",
                                .object(
                                    properties: [
                                        "kind": .string(allowedValues: "public", "secret"), "key": .string,
                                        "revoked": .integer(description: "How many keys of that kind were revoked."),
                                    ]))
                        ], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/events": .init(
                get: .init(
                    summary: "The app's subscription events in recording order, for pulling (secret key).",
                    parameters: [parameter("AppId"), parameter("After"), parameter("Limit")],
                    responses: merged([200: .reference(.component(named: "Events"))], errors(400), adminErrors))),
            "/v1/apps/{appId}/audit": .init(
                get: .init(
                    summary: "Every merge, transfer and alias of the app's customers (secret key).",
                    parameters: [parameter("AppId")],
                    responses: merged([200: json("The audit log.", .object(properties: ["audit": .array(items: .object)]))], adminErrors))),
            "/v1/customers/{appUserId}": .init(
                get: .init(
                    summary: "The customer's state, for proactive restore at launch (public or secret key).",
                    parameters: [
                        parameter("AppUserId"), parameter("StateEnvironment"), parameter("CurrentEnvironment"),
                        .parameter(.init(name: "If-None-Match", context: .header(schema: .string))),
                        .parameter(
                            .init(
                                name: "X-Nonce", context: .header(schema: .string(pattern: "^[A-Za-z0-9+/]{16}$")),
                                description: "12 random bytes, base64: the signed answer is bound to it (the SDK sends one per request).")),
                    ],
                    responses: merged(
                        [200: .reference(.component(named: "Customer")), 304: .response(description: "Not modified.")], customerErrors))),
            "/v1/customers/{appUserId}/transactions": .init(
                post: .init(
                    summary:
                        "Posts a purchase (a StoreKit 2 signed transaction or an app receipt) and returns the state (public or secret key).",
                    parameters: [parameter("PostingAppUserId"), parameter("StateEnvironment"), parameter("CurrentEnvironment")],
                    requestBody: body(
                        .one(of: [
                            .object(
                                properties: ["signedTransaction": .string(description: "StoreKit 2's jwsRepresentation.", minLength: 1)]),
                            .object(properties: ["receipt": .string(description: "An app receipt, base64.", minLength: 1)]),
                        ])),
                    responses: merged([200: .reference(.component(named: "Customer"))], errors(409, 413), customerErrors))),
            "/v1/customers/{appUserId}/alias": .init(
                post: .init(
                    summary:
                        "Makes another app user id (an anonymous one) a name of this customer, merging its purchases (public or secret key).",
                    parameters: [parameter("PostingAppUserId"), parameter("StateEnvironment"), parameter("CurrentEnvironment")],
                    requestBody: body(.object(properties: ["alias": appUserIdSchema])),
                    responses: merged([200: .reference(.component(named: "Customer"))], errors(409, 413), customerErrors))),
            "/v1/customers/{appUserId}/offers/promotional": .init(
                post: .init(
                    summary:
                        "Signs a promotional offer for an existing or lapsed subscriber of the product's group (public or secret key).",
                    description:
                        "With the app's offerSigningKey: StoreKit 1's signature (over the customer's appAccountToken as the application "
                        + "username) and StoreKit 2's JWS. 409: the app has no offerSigningKey, or the customer never subscribed in the "
                        + "group; 400: the product is not an auto-renewable subscription of the catalog.",
                    parameters: [parameter("AppUserId"), parameter("Environment")],
                    requestBody: body(
                        .object(
                            properties: ["productId": .string(minLength: 1), "offerId": .string(minLength: 1, maxLength: 64)])),
                    responses: merged(
                        [
                            200: json(
                                "The signed offer.",
                                .object(
                                    properties: [
                                        "productId": .string, "offerId": .string, "keyIdentifier": .string, "nonce": .string,
                                        "timestamp": .integer, "signature": .string, "appAccountToken": .string,
                                        "jws": .string(required: false, nullable: true),
                                    ]))
                        ], errors(409, 413), customerErrors))),
            "/v1/customers/{appUserId}/events": .init(
                get: .init(
                    summary: "The customer's subscription events (secret key).",
                    parameters: [parameter("AppUserId"), parameter("After"), parameter("Limit")],
                    responses: merged([200: .reference(.component(named: "Events"))], customerErrors))),
            "/v1/subscribers/{appUserId}": .init(
                get: .init(
                    summary: "RevenueCat's v1 subscriber shape (the subset in the README), for migrations (secret key).",
                    parameters: [parameter("AppUserId"), parameter("StateEnvironment")],
                    responses: merged(
                        [
                            200: json(
                                "The subscriber.",
                                .object(properties: ["request_date": .string, "request_date_ms": .integer, "subscriber": .object]))
                        ], customerErrors))),
        ]
    }

    static let healthSchema = JSONSchema.object(
        properties: [
            "status": .string(allowedValues: "ok", "unavailable"), "database": .string(allowedValues: "sqlite", "postgres"),
            "version": .string(description: "The release answering (docs/versioning.md)."),
            "commit": .string(description: "The commit it was built from; `development` for a build not made by scripts/release.sh."),
            "error": .string(required: false),
        ])

    /// PATCH's body: every field optional; unknown ones (and `bundleId`) refused.
    static let appPatchSchema = JSONSchema.object(
        properties: [
            "appAppleId": .integer(required: false, nullable: true, minimum: (1, exclusive: false)),
            "environments": .array(required: false, minItems: 1, uniqueItems: true, items: environmentInputSchema),
            "trustedRoots": .array(
                required: false, nullable: true, items: .string(description: "A DER certificate, base64.", minLength: 1)),
            "sharedSecret": .string(required: false, nullable: true, minLength: 1),
            "serverAPI": ref("ServerAPICredentials", required: false),
            "verifyReceiptURLs": .array(
                required: false, nullable: true, minItems: 2, maxItems: 2,
                items: .string(
                    format: .uri, description: "Production's verifyReceipt, then sandbox's: http or https URLs.", minLength: 1)),
            "catalog": ref("Catalog", required: false),
            "transferPolicy": .string(required: false, allowedValues: "transfer", "keep"),
            "proceeds": proceedsSchema(required: false),
            "offerSigningKey": .object(
                required: false, nullable: true,
                properties: [
                    "keyId": .string(minLength: 1),
                    "privateKey": .string(description: "The In-App Purchase key (.p8), PEM; never shown again.", minLength: 1),
                    "issuerId": .string(
                        required: false, nullable: true, description: "StoreKit 2's iss; the Server API's when absent or null.",
                        minLength: 1),
                ],
                additionalProperties: .a(false)),
        ],
        additionalProperties: .a(false))
}
