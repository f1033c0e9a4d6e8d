import AppStore
import Foundation
import OpenAPIKit
import Storage
import StorekeeperCore

/// The reusable parts of the document: schemas, parameters, responses and the key scheme.
extension OpenAPIDocument {
    static var components: OpenAPI.Components {
        OpenAPI.Components(
            schemas: [
                "Error": errorSchema,
                "Customer": customerSchema,
                "Access": accessSchema,
                "EventPage": eventPageSchema,
                "Product": productSchema,
                "Catalog": .object(
                    properties: ["products": .array(items: .reference(.component(named: "Product")))], additionalProperties: .a(false)),
                "ServerAPICredentials": serverAPISchema,
                "AppView": appViewSchema,
                "Integration": integrationViewSchema,
                "Delivery": deliveryViewSchema,
                "Paywall": paywallSchema,
                "Placement": placementSchema,
                "Experiment": experimentSchema(timestamps: true),
                "MetricResult": metricResultSchema,
                "Exposure": exposureSchema,
            ],
            responses: [
                "Error": .response(
                    description: "An error: a stable code, a message, the input at fault when there is one.",
                    content: [.json: .content(.init(schema: .reference(.component(named: "Error"))))]),
                "Customer": .response(
                    description: "The customer's state at server time.",
                    headers: [
                        "ETag": .b(.init(schema: .string, description: "The state's version, for If-None-Match.")),
                        "Cache-Control": .b(.init(schema: .string, description: "max-age never passes nextChangeAt.")),
                        "X-Signature": .b(
                            .init(
                                schema: .string,
                                description:
                                    "The server's Ed25519 signature over the request's X-Nonce, the path, X-Request-Time, the ETag and the "
                                    + "body, with the intermediate key the root key vouches for (README \"Answers the device can trust\").")
                        ),
                        "X-Request-Time": .b(.init(schema: .string, description: "The server's time when it signed, in ms since 1970.")),
                    ],
                    content: [.json: .content(.init(schema: .reference(.component(named: "Customer"))))]),
                "Events": .response(
                    description: "A page of events.", content: [.json: .content(.init(schema: .reference(.component(named: "EventPage"))))]),
            ],
            parameters: [
                "AppId": .parameter(name: "appId", context: .path(schema: .string(minLength: 1)), description: "The app's id."),
                "AppUserId": .parameter(
                    name: "appUserId", context: .path(schema: appUserIdSchema),
                    description: "The app's name for the customer: 1 to \(AppUserIds.maxLength) characters on one line."),
                "PostingAppUserId": .parameter(
                    name: "appUserId", context: .path(schema: postingAppUserIdSchema),
                    description:
                        "The app's name for the customer: 1 to \(AppUserIds.maxLength) characters on one line, not starting with $ but for the app's $device: ids."
                ),
                "Environment": .parameter(
                    name: "environment", context: .query(schema: environmentInputSchema),
                    description: "One of the app's environments (400 for another). Default: the app's first."),
                "StateEnvironment": .parameter(
                    name: "environment", context: .query(schema: environmentInputSchema),
                    description:
                        "Narrows the answer to one of the app's environments (400 for another). Default: every environment the app "
                        + "accepts, combined: access paid for in any of them is active (an app of one environment: that one)."),
                "CurrentEnvironment": .parameter(
                    name: "currentEnvironment", context: .query(schema: environmentInputSchema),
                    description:
                        "The environment the caller runs in (the SDK reads it from StoreKit), one of the app's (400 for another): it "
                        + "never narrows the answer, it sets each access's activeInCurrentEnvironment and whose offer eligibility is "
                        + "shown. After a purchase, the purchase's environment when not given."),
                "After": .parameter(
                    name: "after", context: .query(schema: .string(pattern: cursorPattern)),
                    description: "The nextCursor of the previous page (0: from the start)."),
                "Limit": .parameter(
                    name: "limit",
                    context: .query(
                        schema: .integer(
                            maximum: (EventQuery.limits.upperBound, exclusive: false),
                            minimum: (EventQuery.limits.lowerBound, exclusive: false),
                            defaultValue: 100)),
                    description: "Events per page."),
            ],
            securitySchemes: [
                "dashboardSession": .b(
                    .apiKey(
                        name: sessionCookie, location: .cookie,
                        description: "The dashboard's session, set by POST /dashboard/sign-in (HttpOnly, SameSite=Strict).")),
                "apiKey": .b(
                    .http(
                        scheme: "bearer",
                        description: "pk_<id>_<secret> (customer endpoints) or sk_<id>_<secret> (all endpoints of its app)")),
                "operatorToken": .b(
                    .http(
                        scheme: "bearer",
                        description:
                            "STOREKEEPER_OPERATOR_TOKEN: changing the exchange rates; once set, also /metrics and /openapi.yaml")),
            ])
    }

    /// `<txOrder>-<seq>` as `nextCursor` writes it, or `0`; what `EventCursor(_:)` parses.
    static let cursorPattern = "^(0|[0-9]{1,\(EventCursor.maxDigits)}-[0-9]{1,\(EventCursor.maxDigits)})$"

    /// The scalars `AppUserIds` refuses (NUL and line breaks), as a regular expression's character class body
    /// (`\u0000\u000A…`).
    static let refusedClass = AppUserIds.refusedScalars.map { String(format: "\\u%04X", $0.value) }.joined()

    /// What `AppUserIds.validate` accepts: 1 to 256 Unicode scalars (JSON Schema's `maxLength` counts the same), no
    /// NUL or line break.
    static let appUserIdSchema = JSONSchema.string(minLength: 1, maxLength: AppUserIds.maxLength, pattern: "^[^\(refusedClass)]+$")

    /// What `AppUserIds.validate(posting: true)` accepts: the same, and no leading `$` but for the app's `$device:` ids.
    static let postingAppUserIdSchema = JSONSchema.string(
        minLength: 1, maxLength: AppUserIds.maxLength,
        pattern:
            "^([^$\(refusedClass)][^\(refusedClass)]*|\(NSRegularExpression.escapedPattern(for: AppUserIds.devicePrefix))[^\(refusedClass)]*)$"
    )

    /// Apple's environments, spelled as `AppRuntime.environment(_:)` takes them.
    static let environmentSchema = JSONSchema.string(allowedValues: Environment.known.map { .init($0.rawValue) })
    /// An environment as input: Apple's spelling or all lower case (any case is read; answers use Apple's).
    static let environmentInputSchema = JSONSchema.string(
        allowedValues: (Environment.known.map(\.rawValue) + Environment.known.map { $0.rawValue.lowercased() }).map { .init($0) })

    static func ref(_ name: String, required: Bool = true) -> JSONSchema { .reference(.component(named: name), required: required) }

    static let errorSchema = JSONSchema.object(
        properties: [
            "error": .object(
                properties: [
                    "code": .string(
                        description: "Stable, for programs.",
                        examples: [
                            "unauthenticated", "forbidden", "not_found", "method_not_allowed", "invalid_request", "payload_too_large",
                            "invalidJWTFormat", "verificationFailure", "invalidAppIdentifier", "invalidEnvironment",
                            "retryableVerificationFailure", "transaction_owned", "receipt_rejected", "unavailable",
                        ]),
                    "message": .string(description: "For people."),
                    "field": .string(
                        required: false, description: "The input at fault (a body field, a query parameter, the app user id), when one is."),
                    "permanent": .boolean(
                        required: false,
                        description:
                            "The same request can never succeed (the input is refused): an SDK drops or finishes it rather than retrying."),
                ])
        ])

    static let accessSchema = JSONSchema.object(
        properties: [
            "active": .boolean(required: false, description: "Active in any environment the answer covers."),
            "expiresDate": .integer(required: false, nullable: true),
            "productId": .string(required: false, nullable: true),
            "transactionId": .string(required: false, nullable: true),
            "environment": .string(
                required: false, description: "In an answer covering several environments: the environment of the access shown.",
                allowedValues: Environment.known.map { .init($0.rawValue) }),
            "environments": .object(
                required: false,
                description:
                    "In an answer covering several environments: the access in each (active, expiresDate, productId, transactionId), "
                    + "by environment; one where nothing ever gave it is absent.",
                additionalProperties: .b(.object)),
            "activeInCurrentEnvironment": .boolean(
                required: false,
                description: "In an answer covering several environments, with currentEnvironment: whether it is active there."),
        ])

    static let customerSchema = JSONSchema.object(
        properties: [
            "appUserId": .string,
            "appId": .string,
            "appAccountToken": .string(
                format: .other("uuid"),
                description:
                    "The UUID to pass as StoreKit's appAccountToken purchase option: Apple's notifications carrying it find this customer."
            ),
            "environment": .string(
                description: "The caller's environment (currentEnvironment, or a purchase's), else the one asked for, else the app's first."
            ),
            "environments": .array(
                description: "The environments the answer covers: the one asked for, else every environment the app accepts.",
                items: .string),
            "requestDate": .integer(description: "Server time, epoch ms: clients must not trust the device clock."),
            "transferred": .boolean(
                required: false, description: "After a post: purchases moved here from another customer (the app's transfer policy)."),
            "state": .string(allowedValues: "new", "active", "inactive"),
            "billingIssue": .boolean,
            "entitlements": .object(additionalProperties: .b(ref("Access"))),
            "products": .object(required: false, additionalProperties: .b(ref("Access"))),
            "groups": .object(required: false),
            "subscriptions": .array(items: .object),
            "nonSubscriptions": .array(items: .object),
            "introEligibility": .object,
            "winBackEligibility": .object(required: false),
            "nextChangeAt": .integer(required: false, nullable: true),
            "consentRescinded": .object(
                required: false,
                description: "A parent or guardian withdrew consent for the app: these purchases give no access. Absent otherwise.",
                properties: [
                    "rescindedAt": .integer(description: "Epoch ms: the RESCIND_CONSENT notification's signedDate."),
                    "withheld": .array(
                        description: "Original transaction ids of subscriptions, transaction ids of one-time purchases: no access.",
                        items: .string),
                ]),
        ])

    static let eventPageSchema = JSONSchema.object(
        properties: [
            "events": .array(
                items: .object(
                    properties: [
                        "id": .string,
                        "type": .string,
                        "effectiveAt": .integer,
                        "cursor": .string(pattern: cursorPattern),
                        "recordedAt": .integer(required: false),
                        "revenue": .integer(
                            required: false, nullable: true,
                            description: "The money the event moves, in milliunits of its currency (negative for a refund)."),
                        "customerId": .string(description: "The customer's id, stable across the app user ids it goes by."),
                        "appUserId": .string(
                            required: false, nullable: true,
                            description: "The customer's first app user id (null for a customer known only by its purchases)."),
                    ])),
            "nextCursor": .string(pattern: cursorPattern),
        ])

    /// An ISO 8601 duration such as P1M, P1Y, P2W, P3D or PT12H; null is the same as absent.
    static let durationSchema = JSONSchema.string(
        required: false, nullable: true, minLength: 2, maxLength: 40, pattern: "^P([0-9]+[YMWD])*(T([0-9]+[HMS])+)?$",
        examples: ["P1M", "P1Y", "P1W", "P3D"])

    static let productSchema = JSONSchema.object(
        properties: [
            "id": .string(minLength: 1),
            "type": .string(allowedValues: "autoRenewable", "nonConsumable", "consumable", "nonRenewing"),
            "group": .string(
                required: false, nullable: true, description: "The subscription group (auto-renewable products).", minLength: 1),
            "period": durationSchema.with(description: "The renewal period (auto-renewable products)."),
            "duration": durationSchema.with(description: "How long a non-renewing subscription lasts."),
            "entitlements": .array(required: false, nullable: true, items: .string(minLength: 1)),
            "level": .integer(required: false, nullable: true, description: "The service level in its group: 1 is the highest."),
            "freeTrial": durationSchema.with(description: "The introductory offer's free trial (P3D to P1Y), what the simulator sells."),
        ],
        additionalProperties: .a(false))

    static let serverAPISchema = JSONSchema.object(
        nullable: true,
        properties: [
            "issuerId": .string(minLength: 1),
            "keyId": .string(minLength: 1),
            "privateKey": .string(description: "The In-App Purchase key (.p8), PEM.", minLength: 1),
            "baseURL": .string(
                format: .uri, required: false, nullable: true, description: "Apple's when absent or null: an http or https URL."),
        ],
        additionalProperties: .a(false))

    static let appViewSchema = JSONSchema.object(
        properties: [
            "appId": .string,
            "bundleId": .string,
            "appAppleId": .integer(required: false, nullable: true),
            "environments": .array(items: .string),
            "trustedRoots": .array(required: false, nullable: true, items: .string),
            "sharedSecretConfigured": .boolean,
            "serverAPI": .object(
                required: false, nullable: true,
                properties: [
                    "issuerId": .string, "keyId": .string, "baseURL": .string(required: false), "privateKeyConfigured": .boolean,
                ]),
            "catalog": ref("Catalog"),
            "transferPolicy": .string(allowedValues: "transfer", "keep"),
            "proceeds": proceedsSchema(required: false),
            "offerSigningKey": .object(
                required: false, nullable: true,
                properties: ["keyId": .string, "issuerId": .string(required: false, nullable: true), "privateKeyConfigured": .boolean]),
        ])

    /// The Small Business Program's start and storefront tax rates, for estimated proceeds.
    static func proceedsSchema(required: Bool) -> JSONSchema {
        .object(
            required: required, nullable: true,
            properties: [
                "smallBusinessProgramSince": .string(required: false, nullable: true, pattern: dayPattern),
                "storefrontTaxRates": .object(
                    required: false, nullable: true,
                    additionalProperties: .b(.number(maximum: (1, exclusive: true), minimum: (0, exclusive: false)))),
            ],
            additionalProperties: .a(false))
    }
}
