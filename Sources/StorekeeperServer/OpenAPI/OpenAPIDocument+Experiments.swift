import Experiments
import OpenAPIKit
import StorekeeperCore

/// Paywalls, placements, experiments and what the app asks of them.
extension OpenAPIDocument {
    static let idPattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
    static let experimentStatusSchema = JSONSchema.string(
        allowedValues: ["draft", "running", "paused", "stopped", "rolledBack"].map { .init($0) })

    static let paywallSchema = JSONSchema.object(
        properties: ["id": .string, "products": .array(items: .string), "config": .fragment(description: "Any JSON the app renders.")])

    static let paywallBodySchema = JSONSchema.object(
        properties: [
            "id": .string(required: false, description: "The path's id, if given."),
            "products": .array(minItems: 1, items: .string).with(description: "Product ids of the app's catalog."),
            "config": .fragment(required: false, description: "Any JSON, at most 64 KB."),
        ],
        additionalProperties: .a(false))

    static let placementSchema = JSONSchema.object(
        properties: ["id": .string, "defaultPaywall": .string, "createdAt": .integer, "updatedAt": .integer])

    static let variantSchema = JSONSchema.object(
        properties: [
            "key": .string(minLength: 1),
            "weight": .number(required: false, nullable: true, minimum: (0, exclusive: false)).with(
                description: "The weights add up to 1."),
            "payload": .fragment(required: false, description: "Any JSON passed to the app as it is."),
            "paywall": .string(required: false, nullable: true, description: "The variant's paywall (default: the placement's)."),
        ],
        additionalProperties: .a(false))

    static let targetingSchema = JSONSchema.object(
        required: false, nullable: true,
        properties: [
            "storefronts": .array(required: false, nullable: true, items: .string),
            "minAppVersion": .string(required: false, nullable: true), "maxAppVersion": .string(required: false, nullable: true),
            "customerStates": .array(required: false, nullable: true, items: .string(allowedValues: "new", "active", "inactive")),
            "newUsersOnly": .boolean(required: false, nullable: true),
        ],
        additionalProperties: .a(false))

    static let namespaceSchema = JSONSchema.object(
        required: false, nullable: true,
        properties: [
            "id": .string, "start": .number(maximum: (1, exclusive: false), minimum: (0, exclusive: false)),
            "end": .number(maximum: (1, exclusive: false), minimum: (0, exclusive: false)),
        ],
        additionalProperties: .a(false))

    /// The definition's fields; `required` lists what a creation needs. An optional field may be null, as if it were
    /// left out (its default); in a change, null puts it back to its default (Schemathesis found `"targeting": null`
    /// accepted while the schema said an object).
    static func definitionProperties(creating: Bool) -> OrderedDictionary<String, JSONSchema> {
        /// An enum or null: `nullable` alone would allow a null that the enum then refuses.
        func orNull(_ schema: JSONSchema) -> JSONSchema { .one(of: [schema, .null()], core: .init(required: false)) }
        return [
            "placement": .string(required: creating, description: "The placement the experiment runs on."),
            "seed": .string(required: false, nullable: true, description: "Hashed with the app user id (default: the key)."),
            "status": orNull(experimentStatusSchema).with(
                description: creating ? "draft (the default) or running." : "running, paused, stopped or rolledBack."),
            "winner": .string(
                required: false, nullable: true, description: "The variant everyone gets once stopped; alone, it stops the test."),
            "variants": .array(required: creating, minItems: 2, items: variantSchema),
            "coverage": .number(required: false, nullable: true, maximum: (1, exclusive: false), minimum: (0, exclusive: false)),
            "targeting": targetingSchema,
            "namespace": namespaceSchema,
            "hashVersion": orNull(.integer(allowedValues: 1, 2)),
        ]
    }

    static var experimentBodySchema: JSONSchema {
        var properties = definitionProperties(creating: true)
        properties["key"] = .string(pattern: idPattern)
        properties["phase"] = .integer(required: false, nullable: true, minimum: (0, exclusive: false))
        // The server's own answer can be posted again: what it keeps is read past.
        for key in ExperimentDefinition.serverKeptKeys.sorted() {
            properties[key] = .integer(required: false, description: "Kept by the server: ignored when given.")
        }
        return .object(properties: properties, additionalProperties: .a(false))
    }

    /// A JSON merge patch: null puts an optional field back to its default.
    static let experimentPatchSchema = JSONSchema.object(
        properties: definitionProperties(creating: false), additionalProperties: .a(false))

    /// A stored definition; with `timestamps`, as the admin API shows it.
    static func experimentSchema(timestamps: Bool) -> JSONSchema {
        var properties = definitionProperties(creating: true)
        properties["key"] = .string
        properties["phase"] = .integer
        properties["status"] = experimentStatusSchema
        properties["startedAt"] = .integer(required: false)
        if timestamps {
            properties["createdAt"] = .integer
            properties["updatedAt"] = .integer
        }
        return .object(properties: properties)
    }

    static let metricResultSchema = JSONSchema.object(
        properties: [
            "value": .number, "count": .integer, "lift": .number(required: false), "ci": .array(required: false, items: .number),
            "liftUndefinedReason": .string(required: false), "difference": .number(required: false),
            "differenceCi": .array(required: false, items: .number), "sequentialDifferenceCi": .array(required: false, items: .number),
            "pValue": .number(required: false), "pValueAdjusted": .number(required: false),
            "sequentialCi": .array(required: false, items: .number), "chanceToBeatControl": .number(required: false),
            "expectedLoss": .number(required: false),
        ])

    static let resultsSchema = JSONSchema.object(
        properties: [
            "experiment": .string, "phase": .integer, "status": experimentStatusSchema, "environment": .string,
            "windowDays": .integer(required: false), "asOf": .integer,
            "arms": .array(
                items: .object(
                    properties: [
                        "key": .string, "exposed": .integer, "trials": .integer, "paid": .integer, "refunded": .integer,
                        "grossUSD": .number, "refundsUSD": .number, "proceedsUSD": .number, "unconvertedCustomers": .integer,
                    ])),
            "cumulative": .array(
                items: .object(
                    properties: [
                        "day": .integer(description: "The UTC day's start, epoch ms."), "variant": .string, "exposed": .integer,
                        "paidLift": .number(required: false), "revenueLift": .number(required: false),
                    ])),
            "analysis": .object(
                properties: [
                    "srm": .object(properties: ["chiSquare": .number, "pValue": .number, "alarm": .boolean]),
                    "variants": .array(
                        items: .object(
                            properties: [
                                "key": .string, "users": .integer, "isControlCheck": .boolean,
                                "metrics": .object(additionalProperties: .b(ref("MetricResult"))),
                            ])),
                ]),
            "recommendation": .object(
                properties: [
                    "action": .string(allowedValues: "keepRunning", "shipVariant", "stop", "stopped"), "variant": .string(required: false),
                    "cause": .string(required: false, allowedValues: "SRM", "harm"), "reason": .string,
                ]),
        ])

    static let exposureSchema = JSONSchema.object(
        properties: [
            "recorded": .boolean.with(description: "false: the customer's first exposure was recorded before (it is the one shown)."),
            "experiment": .string, "variant": .string, "phase": .integer, "placement": .string, "exposedAt": .integer,
        ])

    static var experimentPaths: OpenAPI.PathItem.Map {
        let app = [parameter("AppId")]
        func path(_ name: String, _ description: String) -> Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter> {
            .parameter(.init(name: name, context: .path(schema: .string(minLength: 1)), description: description))
        }
        let paywall = app + [path("paywallId", "The paywall's id.")]
        let placement = app + [path("placementId", "The placement's id.")]
        let experiment = app + [path("experimentKey", "The experiment's key.")]
        return [
            "/v1/apps/{appId}/paywalls": .init(
                get: .init(
                    summary: "The app's paywalls (secret key).", parameters: app,
                    responses: merged(
                        [200: json("The paywalls.", .object(properties: ["paywalls": .array(items: ref("Paywall"))]))], adminErrors))),
            "/v1/apps/{appId}/paywalls/{paywallId}": .init(
                get: .init(
                    summary: "One paywall (secret key).", parameters: paywall,
                    responses: merged([200: json("The paywall.", ref("Paywall"))], adminErrors)),
                put: .init(
                    summary: "Creates or replaces a paywall: its products (in the app's catalog) and any JSON config (secret key).",
                    description: "Audited. The id: 1 to 64 letters, digits, '.', '_' or '-'.",
                    parameters: paywall, requestBody: body(paywallBodySchema),
                    responses: merged(
                        [200: json("Replaced.", ref("Paywall")), 201: json("Created.", ref("Paywall"))], errors(400, 413), adminErrors)),
                delete: .init(
                    summary: "Deletes a paywall that no placement or experiment uses (secret key).", parameters: paywall,
                    responses: merged([204: .response(description: "Deleted.")], errors(409), adminErrors))),
            "/v1/apps/{appId}/placements": .init(
                get: .init(
                    summary: "The app's placements (secret key).", parameters: app,
                    responses: merged(
                        [200: json("The placements.", .object(properties: ["placements": .array(items: ref("Placement"))]))], adminErrors))),
            "/v1/apps/{appId}/placements/{placementId}": .init(
                get: .init(
                    summary: "One placement (secret key).", parameters: placement,
                    responses: merged([200: json("The placement.", ref("Placement"))], adminErrors)),
                put: .init(
                    summary: "Creates or changes a placement: a place in the app that shows a paywall (secret key).",
                    parameters: placement,
                    requestBody: body(.object(properties: ["defaultPaywall": .string(description: "An existing paywall's id.")])),
                    responses: merged(
                        [200: json("Changed.", ref("Placement")), 201: json("Created.", ref("Placement"))], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/experiments": .init(
                get: .init(
                    summary: "The app's experiments, oldest first (secret key).", parameters: app,
                    responses: merged(
                        [200: json("The experiments.", .object(properties: ["experiments": .array(items: ref("Experiment"))]))],
                        adminErrors)),
                post: .init(
                    summary: "Creates an experiment on a placement: a draft, or running at once (secret key).",
                    description:
                        "Only key, placement and variants are required: seed = key, phase 0, equal weights, coverage 1, status draft. "
                        + "Weights given add up to 1 (±0.001). 400 names the field at fault; 409: the key is taken, or another "
                        + "experiment runs on the placement. Audited.",
                    parameters: app, requestBody: body(experimentBodySchema),
                    responses: merged([201: json("The experiment.", ref("Experiment"))], errors(400, 409, 413), adminErrors))),
            "/v1/apps/{appId}/experiments/definitions": .init(
                get: .init(
                    summary: "What an SDK needs to assign offline: placements and the experiments that are not drafts (any key).",
                    parameters: app,
                    responses: merged(
                        [
                            200: json(
                                "The definitions.",
                                .object(
                                    properties: [
                                        "placements": .array(items: .object(properties: ["id": .string, "defaultPaywall": .string])),
                                        "experiments": .array(items: experimentSchema(timestamps: false)),
                                    ]))
                        ], adminErrors))),
            "/v1/apps/{appId}/experiments/{experimentKey}": .init(
                get: .init(
                    summary: "One experiment (secret key).", parameters: experiment,
                    responses: merged([200: json("The experiment.", ref("Experiment"))], adminErrors)),
                patch: .init(
                    summary: "Changes an experiment: status (running, paused, stopped, rolledBack), winner, weights … (secret key).",
                    description:
                        "A winner alone stops the test and ships that variant to everyone. In a started experiment, new variants, "
                        + "weights, targeting, namespace, seed or hash version start a new phase; coverage keeps the phase. "
                        + "Stopped and rolled-back experiments do not change (409). Audited.",
                    parameters: experiment, requestBody: body(experimentPatchSchema),
                    responses: merged([200: json("The experiment.", ref("Experiment"))], errors(400, 409, 413), adminErrors))),
            "/v1/apps/{appId}/experiments/{experimentKey}/results": .init(
                get: .init(
                    summary: "The current phase's results from real revenue, with a recommendation (secret key).",
                    parameters: experiment + [
                        parameter("Environment"),
                        query("window", .string(pattern: "^(unbounded|[1-9][0-9]{0,3})$"), "Days after the first exposure (default 14)."),
                    ],
                    responses: merged([200: json("The results.", resultsSchema)], errors(400), adminErrors))),
            "/v1/customers/{appUserId}/placements/{placementId}": .init(
                get: .init(
                    summary: "The paywall a placement shows this customer, and its experiment arm when it is in one (any key).",
                    description:
                        "Sticky: the first answer of a phase is stored. A paused, stopped or rolled-back experiment answers the "
                        + "control (or the winner) at once, with experiment null.",
                    parameters: [
                        parameter("AppUserId"), path("placementId", "The placement's id."), parameter("Environment"),
                        query("appVersion", .string, "The app's version, for targeting."),
                        query("storefront", .string, "The App Store storefront (ISO 3166-1 alpha-3), when the server knows none."),
                    ],
                    responses: merged(
                        [
                            200: json(
                                "The paywall.",
                                .object(
                                    properties: [
                                        "placement": .string, "paywall": ref("Paywall"),
                                        "experiment": .object(
                                            nullable: true, properties: ["key": .string, "variant": .string, "phase": .integer]),
                                    ]))
                        ], errors(404), customerErrors))),
            "/v1/customers/{appUserId}/exposures": .init(
                post: .init(
                    summary: "Records the customer's first exposure to its experiment arm (any key).",
                    description: "201 the first time, 200 after (nothing changes); 409 for a variant or phase that is not the assignment.",
                    parameters: [parameter("AppUserId"), parameter("Environment")],
                    requestBody: body(
                        .object(
                            properties: [
                                "experiment": .string, "variant": .string, "phase": .integer(minimum: (0, exclusive: false)),
                                "placement": .string,
                            ])),
                    responses: merged(
                        [200: json("Recorded before.", ref("Exposure")), 201: json("Recorded.", ref("Exposure"))], errors(404, 409, 413),
                        customerErrors))),
        ]
    }
}
