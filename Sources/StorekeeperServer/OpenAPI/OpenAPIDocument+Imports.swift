import OpenAPIKit
import StorekeeperCore

/// Imports of existing customers from the App Store Server API.
extension OpenAPIDocument {
    static let importJobSchema = JSONSchema.object(
        properties: [
            "id": .string, "appId": .string, "format": .string(allowedValues: ImportFormat.allCases.map { .init($0.rawValue) }),
            "source": .string,
            "status": .string(
                description:
                    "reading: the file is stored and the server reads it (total and droppedLines grow as it does); running: customers are being imported; done: every customer imported, not found at Apple, or failed for good; incomplete: some wait for another run (post the file again); failed: stopped by an error that is no customer's (detail).",
                allowedValues: ["reading", "running", "done", "incomplete", "failed"]),
            "detail": .string(required: false), "total": .integer, "imported": .integer, "notFound": .integer, "failed": .integer,
            "droppedLines": .integer, "emitEvents": .boolean, "createdAt": .integer, "updatedAt": .integer,
        ])

    static let importIdParameter = Either<OpenAPI.Reference<OpenAPI.Parameter>, OpenAPI.Parameter>.parameter(
        .init(name: "importId", context: .path(schema: .string(minLength: 1)), description: "The import's id (imp_…)."))

    static var importPaths: OpenAPI.PathItem.Map {
        let app = [parameter("AppId")]
        let one = app + [importIdParameter]
        return [
            "/v1/apps/{appId}/imports": .init(
                get: .init(
                    summary: "The app's imports, newest first (secret key).", parameters: app,
                    responses: merged(
                        [200: json("The imports.", .object(properties: ["imports": .array(items: importJobSchema)]))], adminErrors)),
                post: .init(
                    summary: "Imports existing customers from the App Store Server API (secret key): the body is the file.",
                    description:
                        "A plain CSV (app_user_id,transaction_id, optionally app_account_token and environment), RevenueCat's "
                        + "Scheduled Data Export, or Apphud's Customers API answers (JSON lines or an array). Each customer's history "
                        + "and statuses are fetched with the app's serverAPI key and stored as if notified; state, events and ledger "
                        + "follow. The file is stored as it comes (up to 512 MB) and answered 202 once stored; a CSV header without "
                        + "the format's columns is refused at once, any other bad line fails the job (detail). Runs in the background, paced at Apple's documented limit; the same file again answers the same "
                        + "job (resumed if it stopped). Imported history is not sent to destinations unless emitEvents=true.",
                    parameters: app + [
                        query(
                            "format", .string(allowedValues: ImportFormat.allCases.map { .init($0.rawValue) }),
                            "The file's format (default: told by its first line)."),
                        query(
                            "emitEvents", .string(allowedValues: ["true", "false"]), "Send the imported history's events to destinations."),
                        query("rate", .number(minimum: (0, exclusive: false)), "Customers a second (0: unpaced); default Apple's limit."),
                        query("name", .string, "The file's name, for people reading the job."),
                    ],
                    requestBody: .init(
                        content: [.csv: .content(.init(schema: .string)), .json: .content(.init(schema: .string))], required: true),
                    responses: merged([202: json("The job.", importJobSchema)], errors(400, 413), adminErrors))),
            "/v1/apps/{appId}/imports/{importId}": .init(
                get: .init(
                    summary: "One import and how far it has come (secret key).", parameters: one,
                    responses: merged([200: json("The job.", importJobSchema)], adminErrors))),
            "/v1/apps/{appId}/imports/{importId}/problems": .init(
                get: .init(
                    summary: "The customers not imported and the lines left out, as CSV (secret key).",
                    description: "Columns: line,app_user_id,transaction_ids,outcome (notFound, failed, dropped),reason.",
                    parameters: one,
                    responses: merged(
                        [200: .response(description: "The error file.", content: [.csv: .content(.init(schema: .string))])], adminErrors))),
        ]
    }
}
