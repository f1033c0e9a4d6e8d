import Foundation
import Hummingbird
import StorekeeperCore

/// Imports of existing customers (`/v1/apps/{appId}/imports`, secret key): the file is posted, the server imports it in
/// the background, and the job tells how far it has come.
struct ImportController {
    let core: StorekeeperCore

    var routes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.post("imports", use: start)
        routes.get("imports", use: list)
        routes.get("imports/:importId", use: show)
        routes.get("imports/:importId/problems", use: problems)
        return routes
    }

    /// The largest file posted: a million customers' RevenueCat transactions fit.
    static let maxBytes = CustomerImports.maxFileBytes

    struct JobList: ResponseEncodable { var imports: [ImportJobStatus] }

    /// The body is the file (CSV or JSON as `format` says, or as its first line shows), stored as it comes (memory
    /// holds a megabyte of it, whatever its size) and read by the import worker; `emitEvents=true` sends the imported
    /// history to the app's destinations; `rate` (customers a second, 0 for none) paces it instead of Apple's
    /// documented limit. Answers 202 with the job (`reading`) once the last byte is stored: the same file again answers
    /// the same job.
    @Sendable func start(_ request: Request, context: AdminContext) async throws -> EditedResponse<ImportJobStatus> {
        let query = request.uri.queryParameters
        let format = try query.get("format").map { name throws(CoreError) -> ImportFormat in
            guard let format = ImportFormat(rawValue: name) else {
                throw .invalidInput(field: "format", "format is plain, revenuecat or apphud")
            }
            return format
        }
        let emitEvents = try Self.flag(query.get("emitEvents"), field: "emitEvents")
        let rate = try query.get("rate").map { text throws(CoreError) -> Double in
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw .invalidInput(field: "rate", "rate is a number of customers a second, 0 for no pacing")
            }
            return value
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > Self.maxBytes { throw Self.tooLarge }
        let job = try await core.imports.receive(
            LimitedBody(body: request.body, limit: Self.maxBytes), format: format, app: context.app.id,
            source: query.get("name") ?? "upload", emitEvents: emitEvents)
        if job.status != "done" {
            core.importWorker.submit(job.id, options: rate.map { CustomerImports.RunOptions(perSecond: $0 > 0 ? $0 : nil) })
        }
        return EditedResponse(status: .accepted, response: job)
    }

    static let tooLarge = ErrorResponse(.contentTooLarge, "payload_too_large", "an import file is at most \(maxBytes >> 20) MB")

    /// A request's body that ends in 413 past `limit` bytes.
    struct LimitedBody: AsyncSequence {
        typealias Element = ByteBuffer
        let body: RequestBody
        let limit: Int

        struct AsyncIterator: AsyncIteratorProtocol {
            var inner: RequestBody.AsyncIterator
            let limit: Int
            var seen = 0

            mutating func next() async throws -> ByteBuffer? {
                guard let buffer = try await inner.next() else { return nil }
                seen += buffer.readableBytes
                guard seen <= limit else { throw ImportController.tooLarge }
                return buffer
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inner: body.makeAsyncIterator(), limit: limit) }
    }

    static func flag(_ text: String?, field: String) throws(CoreError) -> Bool {
        switch text {
        case nil, "false": return false
        case "true": return true
        default: throw .invalidInput(field: field, "\(field) is true or false")
        }
    }

    @Sendable func list(_ request: Request, context: AdminContext) async throws -> JobList {
        JobList(imports: try await core.imports.jobs(app: context.app.id))
    }

    @Sendable func show(_ request: Request, context: AdminContext) async throws -> ImportJobStatus {
        try await core.imports.job(id: context.parameters.get("importId") ?? "", app: context.app.id)
    }

    /// The customers not imported and the lines left out, as CSV: `line,app_user_id,transaction_ids,outcome,reason`.
    @Sendable func problems(_ request: Request, context: AdminContext) async throws -> Response {
        let problems = try await core.imports.problems(job: context.parameters.get("importId") ?? "", app: context.app.id)
        return Response(
            status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: ImportProblemCSV.text(problems))))
    }
}

extension ImportJobStatus: ResponseEncodable {}
