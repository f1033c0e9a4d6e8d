import Foundation
import Hummingbird
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Import files read as their bytes come: the same rows whatever the pieces, a row or entry too long refused, and a
/// file larger than a stored part grouped into customers in the database.
@Suite("Import files read as they come, in bounded memory")
struct ImportStreamingTests {
    static let files: [(name: String, text: String)] = [
        (
            "plain, with a byte-order mark, CRLF, quoted commas, quotes and line breaks",
            "\u{FEFF}App User ID,environment,Transaction ID,app_account_token\r\nann,Sandbox,1000,\r\n"
                + "\"bob, \"\"the\"\"\nsecond\",production,2000,5C0A7E2F-0000-4000-8000-00000000ABCD\r\nann,sandbox,1001,\r\n,,3000,\ncarl,,abc,\n"
                + "\"dora\",,4000,\"not-a-uuid\""
        ),
        (
            "RevenueCat",
            "rc_original_app_user_id,rc_last_seen_app_user_id_alias,store,is_sandbox,store_transaction_id,original_store_transaction_id,x\n"
                + "$RCAnonymousID:aa,user-1,app_store,false,1001,1000,\"{\"\"a\"\": \"\"b, c\"\"}\"\n"
                + "legacy-9,user-2,APP_STORE,true,2000,,{}\n$RCAnonymousID:dd,user-4,play_store,false,GPA.1,GPA.1,{}\n"
        ),
        (
            "Apphud, one answer a line",
            #"{"data":{"results":{"user_id":"u1","subscriptions":[{"original_transaction_id":"1000","environment":"sandbox"},{"original_transaction_id":"GPA.1","store":"play_store"}]}}}"#
                + "\n\n" + #"{"user_id":"u2 [x]","subscriptions":[]}"# + "\r\n"
                + #"{"user_id":"u3","purchases":[{"transaction_id":"3000"}]}"#
        ),
        (
            "Apphud, one array",
            "\u{FEFF} [" + #"{"user_id":"u1","subscriptions":[{"original_transaction_id":"1000","note":"a \"]\" ,{"}]}"#
                + " ,\n" + #"{"user_id":"u2","purchases":[{"transaction_id":"2000","environment":"production"}]}"# + "]\n"
        ),
    ]

    struct Outcome: Equatable {
        var rows: [ImportRow] = []
        var dropped: [ImportDroppedLine] = []
        var error: String?
    }

    static func read(_ text: String, format: ImportFormat, pieces size: Int) -> Outcome {
        var reader = ImportFileReader(format: format)
        var outcome = Outcome()
        let bytes = Array(text.utf8)
        do {
            for start in stride(from: 0, to: bytes.count, by: size) {
                let read = try reader.feed(bytes[start..<min(start + size, bytes.count)])
                outcome.rows += read.rows
                outcome.dropped += read.dropped
            }
            let read = try reader.finish()
            outcome.rows += read.rows
            outcome.dropped += read.dropped
        } catch {
            outcome.error = error.description
        }
        return outcome
    }

    @Test("a file read in pieces of any size gives the rows, dropped lines and errors it gives read whole")
    func pieces() {
        for file in Self.files + [
            ("an unclosed quote", "app_user_id,transaction_id\nann,\"1000\n"), ("an unclosed array", "[{\"user_id\":\"a\"}"),
        ] {
            let format = ImportFormat.detect(Array(file.text.utf8))
            let whole = Self.read(file.text, format: format, pieces: file.text.utf8.count)
            #expect(!whole.rows.isEmpty || whole.error != nil, "\(file.name)")
            for size in [1, 2, 3, 5, 13, 64] {
                #expect(Self.read(file.text, format: format, pieces: size) == whole, "\(file.name) in pieces of \(size)")
            }
        }
        let plain = Self.read(Self.files[0].text, format: .plain, pieces: 4)
        #expect(plain.rows.map(\.appUserId) == ["ann", "bob, \"the\"\nsecond", "ann", nil])
        #expect(plain.rows.map(\.line) == [2, 3, 5, 6] && plain.dropped.map(\.line) == [7, 8])
        let array = Self.read(Self.files[3].text, format: .apphud, pieces: 3)
        #expect(array.error == nil && array.rows.map(\.transactionId) == ["1000", "2000"] && array.rows.map(\.line) == [1, 2])
        let lines = Self.read(Self.files[2].text, format: .apphud, pieces: 7)
        #expect(lines.rows.map(\.line) == [1, 4] && lines.dropped.map(\.line) == [1, 3])
    }

    @Test("a row or an answer over a megabyte is refused with its line, not held")
    func tooLong() {
        let long = String(repeating: "x", count: 1 << 20)
        let csv = Self.read("app_user_id,transaction_id\nann,1000\n\(long),2000\n", format: .plain, pieces: 65536)
        #expect(csv.error?.contains("line 3: a row over 1 MB") == true, "\(csv.error ?? "no error")")
        let json = Self.read("{\"user_id\":\"a\"}\n{\"user_id\":\"\(long)\"}\n", format: .apphud, pieces: 65536)
        #expect(json.error?.contains("line 2: an entry over 1 MB") == true, "\(json.error ?? "no error")")
    }

    @Test("a posted body past the limit ends in 413 as it streams, whatever Content-Length said")
    func limit() async throws {
        var body = ImportController.LimitedBody(body: RequestBody(buffer: ByteBuffer(string: "0123456789")), limit: 9).makeAsyncIterator()
        await #expect {
            while try await body.next() != nil {}
        } throws: { ($0 as? ErrorResponse)?.status == .contentTooLarge }
        var fits = ImportController.LimitedBody(body: RequestBody(buffer: ByteBuffer(string: "0123456789")), limit: 10).makeAsyncIterator()
        #expect(try await fits.next()?.readableBytes == 10)
    }

    @Test(
        "a file of several stored parts: a customer's lines at its start and end are one customer, in the order of first lines; the parts are gone once read",
        arguments: TestDatabase.available)
    func parts(database: TestDatabase) async throws {
        let credentials = AppConfiguration.ServerAPICredentials(
            issuerId: "issuer", keyId: "KEY123", privateKey: ImportTests.signingKey.pemRepresentation, baseURL: "http://127.0.0.1:9")
        let h = try await Harness.make(database, serverAPI: credentials)
        try await h.test { _ in
            var text =
                "rc_original_app_user_id,rc_last_seen_app_user_id_alias,store,is_sandbox,store_transaction_id,original_store_transaction_id\n"
            text += "$RCAnonymousID:a,first,app_store,false,1,1\n"
            text += "x,y,play_store,false,GPA.1,GPA.1\n"
            var line = 4
            var userFour = 0
            while text.utf8.count < 2 * CustomerImports.partBytes + 1000 {
                text += "old-\(line),user-\(line % 5000),app_store,false,\(100_000 + line),\(100_000 + line)\n"
                if line % 5000 == 4 { userFour += 1 }
                line += 1
            }
            text += "legacy,first,app_store,false,2,2\n"
            let job = try await ImportTests.receive(h, text, source: "big.csv", parts: 41)
            #expect(try await ImportTests.count("import_uploads", h) == 3, "the file is kept in 1 MB parts until it is read")
            #expect(try await h.core.imports.read(job: job.id))
            let read = try await h.core.imports.job(id: job.id, app: h.app.appId)
            #expect(read.status == "running" && read.total == 1 + 5000 && read.droppedLines == 1, "\(read)")
            #expect(try await ImportTests.count("import_uploads", h) == 0)
            let customers = try await h.core.database.reading { session in
                try await session.pendingImportCustomers(job: job.id, after: -1, limit: 10)
            }
            #expect(customers.first?.appUserId == "first" && customers.first?.transactionIds == ["1", "2"])
            #expect(customers.first?.aliases == ["legacy"] && customers.first?.line == 2)
            #expect(customers.map(\.item) == Array(0..<10) && customers[1].appUserId == "user-4" && customers[1].line == 4)
            // Lines of user-4 recur every 5,000 lines, across the parts: folded into one customer.
            #expect(userFour > 5 && customers[1].transactionIds.count == userFour, "\(customers[1].transactionIds.count) of \(userFour)")
            let problems = try await h.core.imports.problems(job: job.id, app: h.app.appId)
            #expect(problems.count == 1 && problems[0].line == 3 && problems[0].outcome == "dropped")

            // A file with a line that cannot be read: the job fails with the line, imports nothing, and the same
            // file posted again is read again.
            let bad = "app_user_id,transaction_id\nann,1000\nbob,\"2000\n"
            let failed = try await ImportTests.receive(h, bad, source: "bad.csv")
            #expect(try await h.core.imports.read(job: failed.id) == false)
            let status = try await h.core.imports.job(id: failed.id, app: h.app.appId)
            #expect(status.status == "failed" && status.total == 0 && status.detail?.contains("line 3") == true, "\(status)")
            #expect(try await h.core.imports.run(job: failed.id).isEmpty)
            #expect(try await h.core.imports.job(id: failed.id, app: h.app.appId).status == "failed")
            let again = try await ImportTests.receive(h, bad, source: "bad.csv")
            #expect(again.id == failed.id && again.status == "reading")
            #expect(try await h.core.imports.read(job: failed.id) == false)

            // A body that fails half way (its client gone, or past the size limit): nothing of it stays.
            struct Gone: Error {}
            let bytes = Array(text.utf8)
            let failing = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                continuation.yield(ByteBuffer(bytes: bytes.prefix(CustomerImports.partBytes + 10)))
                continuation.yield(ByteBuffer(bytes: bytes.dropFirst(CustomerImports.partBytes + 10).prefix(CustomerImports.partBytes)))
                continuation.finish(throwing: Gone())
            }
            await #expect(throws: Gone.self) {
                _ = try await h.core.imports.receive(failing, format: nil, app: h.app.appId, source: "gone.csv", emitEvents: false)
            }
            let left = try await ImportTests.count("import_uploads", h)
            #expect(left == 0)
        }
    }
}
