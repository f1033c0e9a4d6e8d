import Analytics
import OpenAPIKit

/// The analytics operations: metrics, the overview, exchange rates.
extension OpenAPIDocument {
    static let dayPattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

    static func query(_ name: String, _ schema: JSONSchema, _ description: String) -> Either<
        OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter
    > {
        .parameter(.init(name: name, context: .query(schema: schema), description: description))
    }

    static let pointSchema = JSONSchema.object(
        properties: ["start": .string(pattern: dayPattern), "value": .number],
        additionalProperties: .b(.number))

    static let seriesSchema = JSONSchema.object(
        properties: [
            "metric": .string(allowedValues: Metric.allCases.map { .init($0.rawValue) }),
            "interval": .string(allowedValues: MetricInterval.allCases.map { .init($0.rawValue) }),
            "environment": environmentSchema, "timeZone": .string, "currency": .string(allowedValues: "USD"),
            "points": .array(items: pointSchema),
            "unconverted": .object(additionalProperties: .b(.number)),
            "estimated": .array(items: .string), "notes": .array(items: .string),
        ])

    static let overviewSchema = JSONSchema.object(
        properties: [
            "environment": environmentSchema, "currency": .string(allowedValues: "USD"), "mrr": .number, "arr": .number,
            "activeSubscriptions": .integer, "activeTrials": .integer, "revenueLast30Days": .number, "refundsLast30Days": .number,
            "trialConversionLast30Days": .number(required: false, nullable: true),
            "churnLast30Days": .number(required: false, nullable: true),
            "unconverted": .object(additionalProperties: .b(.object(additionalProperties: .b(.number)))),
            "estimated": .array(items: .string), "notes": .array(items: .string),
        ])

    static let ratesSchema = JSONSchema.object(
        properties: [
            "imported": .integer,
            "currencies": .array(
                items: .object(
                    properties: [
                        "currency": .string, "rates": .integer, "first": .string(pattern: dayPattern), "last": .string(pattern: dayPattern),
                    ])),
        ])

    /// The core paths, then the analytics ones and the dashboard's pages.
    static var allPaths: OpenAPI.PathItem.Map {
        var all = paths
        for (path, item) in analyticsPaths { all[path] = item }
        for (path, item) in dashboardPaths { all[path] = item }
        for (path, item) in integrationPaths { all[path] = item }
        for (path, item) in experimentPaths { all[path] = item }
        for (path, item) in refundPaths { all[path] = item }
        for (path, item) in retentionPaths { all[path] = item }
        for (path, item) in importPaths { all[path] = item }
        return all
    }

    static var analyticsPaths: OpenAPI.PathItem.Map {
        [
            "/v1/apps/{appId}/metrics": .init(
                get: .init(
                    summary: "The metrics, with what each measures (secret key). Formulas: docs/metrics.md.",
                    parameters: [parameter("AppId")],
                    responses: merged(
                        [
                            200: json(
                                "The metrics.",
                                .object(properties: [
                                    "metrics": .array(items: .object(properties: ["name": .string, "summary": .string, "path": .string]))
                                ]))
                        ], adminErrors))),
            "/v1/apps/{appId}/metrics/overview": .init(
                get: .init(
                    summary:
                        "The headline numbers now: MRR, ARR, actives, trials, the last 30 days' revenue, refunds, trial conversion and churn (secret key).",
                    parameters: [parameter("AppId"), parameter("Environment")],
                    responses: merged([200: json("The overview.", overviewSchema)], errors(400), adminErrors))),
            "/v1/apps/{appId}/metrics/{metric}": .init(
                get: .init(
                    summary: "One metric as a series over [from, to) (secret key); CSV with Accept: text/csv or a .csv suffix.",
                    parameters: [
                        parameter("AppId"),
                        .parameter(
                            .init(
                                name: "metric",
                                context: .path(
                                    schema: .string(
                                        allowedValues: Metric.allCases.flatMap { [.init($0.rawValue), .init($0.rawValue + ".csv")] })),
                                description: "The metric's name; with .csv, the answer is CSV.")),
                        parameter("Environment"),
                        query("from", .string(pattern: dayPattern), "The first day (YYYY-MM-DD, in tz). Default: 30 days before to."),
                        query("to", .string(pattern: dayPattern), "The day after the last (YYYY-MM-DD, in tz). Default: tomorrow (UTC)."),
                        query("interval", .string(allowedValues: "day", "week", "month"), "day (default), week (from Monday) or month."),
                        query("tz", .string(minLength: 1), "An IANA time zone (Europe/Berlin). Default: UTC."),
                        query("product", .string(minLength: 1), "Only this product."),
                        query("group", .string(minLength: 1), "Only this subscription group."),
                        query("storefront", .string(minLength: 1), "Only this storefront (alpha-3, as Apple writes it)."),
                        query("window", .string(pattern: "^[0-9]{1,3}$"), "Trial conversion: days after a trial's end (default 3)."),
                        query(
                            "excludeRefunded", .string(allowedValues: "true", "false"), "Trial conversion: leave out refunded conversions."),
                    ],
                    responses: merged(
                        [
                            200: .response(
                                description: "The series.",
                                content: [.json: .content(.init(schema: seriesSchema)), .csv: .content(.init(schema: .string))])
                        ], errors(400), adminErrors))),
            "/v1/rates": .init(
                get: .init(
                    summary: "The stored exchange rates to USD, per currency (any app's secret key).",
                    responses: merged([200: json("Rates per currency.", ratesSchema)], errors(401, 403, 503))),
                put: .init(
                    summary:
                        "Loads exchange rates to USD from CSV (the operator token): 'date,currency,usd_per_unit', or the ECB's 'Date,USD,JPY,…' per euro.",
                    description:
                        "A rate already stored for a currency and day is replaced; the ledger is converted again. The rates are shared by every app of the server, so only the operator changes them: an app's key is 403.",
                    requestBody: .init(content: [.csv: .content(.init(schema: .string))], required: true),
                    responses: merged(
                        [200: json("What was loaded, and the rates per currency.", ratesSchema)], errors(400, 401, 403, 413, 503)),
                    security: [[.component(named: "operatorToken"): []]])),
        ]
    }
}
