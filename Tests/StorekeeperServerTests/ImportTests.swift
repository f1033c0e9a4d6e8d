import Analytics
import AppStore
import AppStoreSimulator
import AppStoreSimulatorAPI
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// The files `storekeeper import` reads.
@Suite("Import files: plain CSV, RevenueCat's export, Apphud's answers")
struct ImportFileTests {
    @Test("a plain CSV: columns by name, quoted cells, one customer per app user id, lines that name nothing left out with a reason")
    func plain() throws {
        let file = try ImportFile.read(
            Data(
                """
                \u{FEFF}App User ID,environment,Transaction ID,app_account_token
                ann,Sandbox,1000,
                "bob, the second",production,2000,5C0A7E2F-0000-4000-8000-00000000ABCD
                ann,sandbox,1001,
                ,,3000,
                carl,,abc,
                dora,,4000,not-a-uuid
                $anonymous:5000,,5000,
                """.utf8))
        #expect(file.format == .plain)
        #expect(file.customers.map(\.appUserId) == ["ann", "bob, the second", nil, nil])
        #expect(file.customers[0].transactionIds == ["1000", "1001"] && file.customers[0].environment == "Sandbox")
        #expect(file.customers[1].appAccountToken == "5c0a7e2f-0000-4000-8000-00000000abcd")
        #expect(file.customers[1].environment == "Production" && file.customers[1].line == 3)
        #expect(file.customers[2].transactionIds == ["3000"] && file.customers[3].transactionIds == ["5000"])
        #expect(file.dropped.map(\.line) == [6, 7])
        #expect(file.dropped[0].reason.contains("'abc' is not an App Store transaction id"))
        #expect(file.dropped[1].reason.contains("not a UUID"))
    }

    @Test("RevenueCat's export: named by the last seen alias (the original app user id an alias), other stores left out")
    func revenueCat() throws {
        let file = try ImportFile.read(
            Data(
                """
                rc_original_app_user_id,rc_last_seen_app_user_id_alias,product_identifier,store,is_sandbox,store_transaction_id,original_store_transaction_id,custom_subscriber_attributes
                $RCAnonymousID:aa,user-1,pro.monthly,app_store,false,1001,1000,"{""a"": ""b, c""}"
                $RCAnonymousID:aa,user-1,pro.monthly,app_store,false,1002,1000,{}
                legacy-9,user-2,pro.yearly,APP_STORE,true,2000,,{}
                $RCAnonymousID:cc,$RCAnonymousID:cc,pro.monthly,app_store,t,3000,3000,{}
                $RCAnonymousID:dd,user-4,pro_monthly,play_store,false,GPA.1234,GPA.1234,{}
                """.utf8))
        #expect(file.format == .revenuecat)
        #expect(file.customers.map(\.appUserId) == ["user-1", "user-2", nil])
        #expect(file.customers[0].transactionIds == ["1000"] && file.customers[0].environment == "Production")
        #expect(file.customers[1].aliases == ["legacy-9"] && file.customers[1].transactionIds == ["2000"])
        #expect(file.customers[1].environment == "Sandbox" && file.customers[2].environment == "Sandbox")
        #expect(file.dropped.count == 1 && file.dropped[0].line == 6 && file.dropped[0].reason.contains("play_store"))
    }

    @Test("Apphud's Customers API answers, one per line or as an array; other stores and empty customers named")
    func apphud() throws {
        let line1 =
            #"{"data":{"results":{"user_id":"u1","subscriptions":[{"original_transaction_id":"1000","environment":"sandbox","store":"app_store","status":"regular"},{"original_transaction_id":"GPA.1","store":"play_store"}],"purchases":[{"transaction_id":"1100","store":"app_store","environment":"sandbox"}]}}}"#
        let line2 = #"{"user_id":"u2","subscriptions":[]}"#
        let file = try ImportFile.read(Data((line1 + "\n\n" + line2 + "\n").utf8))
        #expect(file.format == .apphud)
        #expect(file.customers.count == 1 && file.customers[0].transactionIds == ["1000", "1100"])
        #expect(file.customers[0].environment == "Sandbox")
        #expect(file.dropped.map(\.line) == [1, 3])
        let array = try ImportFile.read(Data("[\(line1), \(line2)]".utf8))
        #expect(
            array.customers
                == file.customers.map {
                    var c = $0
                    c.line = 1
                    return c
                })
    }

    @Test("what cannot be read is refused with the line: no header, an unclosed quote, JSON that is not Apphud's, an empty file")
    func refusals() {
        for (text, words) in [
            ("user,purchase\nann,1\n", "needs app_user_id and transaction_id"),
            ("app_user_id,transaction_id\n\"ann,1\n", "never closed"),
            ("{\"data\": 3}\n", "line 1: not an Apphud customer answer"),
            ("", "empty"),
        ] {
            #expect {
                _ = try ImportFile.read(Data(text.utf8))
            } throws: { ($0 as? CoreError)?.description.contains(words) == true }
        }
    }

    @Test("the simulator's three exports of one store name the same customers and purchases")
    func simulatorExports() throws {
        var model = StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 8, start: at(0))
        try model.addCustomer("ann")
        _ = try model.subscribe("ann", product: "pro.monthly", offer: .freeTrial)
        _ = try model.buyOnce("ann", product: "coins.100")
        try model.addCustomer("bob")
        _ = try model.subscribe("bob", product: "pro.monthly", offer: .none)
        _ = try model.advance(to: at(70))
        let plain = try ImportFile.read(Data(model.customerIds(as: .plain).utf8))
        for format in [CustomerIdsFormat.revenuecat, .apphud] {
            let other = try ImportFile.read(Data(model.customerIds(as: format).utf8))
            #expect(other.format.rawValue == format.rawValue && other.dropped.isEmpty)
            #expect(other.customers.map(\.appUserId) == plain.customers.map(\.appUserId))
            // Each names the purchases by an id Apple resolves to the same customer: originals, or each period.
            for (a, b) in zip(other.customers, plain.customers) {
                #expect(
                    Set(b.transactionIds).isSubset(of: Set(a.transactionIds)) || Set(a.transactionIds).isSubset(of: Set(b.transactionIds)))
            }
        }
    }
}

/// Customers Apple knows and the server does not, imported from the fake App Store Server API.
@Suite("Import: existing customers from the App Store Server API")
struct ImportTests {
    static let signingKey = P256.Signing.PrivateKey()

    @Test(
        "a population the server never heard of, imported: every state equals the simulator's, no event sent, a second run changes nothing, a stopped run resumes",
        arguments: TestDatabase.available)
    func population(database: TestDatabase) async throws {
        let population = Population(customers: 150, days: 200, seed: 11).scenario(catalog: EndToEndTests.catalog)
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 91, start: at(0)))
        let api = FakeServerAPI(store: store, bundleId: bundleId, publicKey: Self.signingKey.publicKey)
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: Self.signingKey) { credentials in
            let h = try await Harness.make(database, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { client in
                // Apple knows every purchase; every notification is lost.
                let never: WebhookSender = { _ in nil }
                let player = ScenarioPlayer(
                    store: store, delivery: Delivery(send: never, faults: FaultPlan(drop: 1), seed: 3), start: at(0), clock: .virtual)
                for step in population.steps { try await player.play(step, lenient: true) }
                try await player.advance(to: at(200))
                _ = try await client.createWebhook(h, url: "http://127.0.0.1:9/hook")
                let rig = EndToEndTests.Rig(harness: h, store: store, player: player)
                let before = try await rig.differences(client, events: false)
                #expect(before.count > 50, "the server should know none of them: \(before.count) differ")

                let text = await store.with { $0.customerIds(as: .plain) }
                let file = try ImportFile.read(Data(text.utf8))
                let received = try await Self.receive(h, text, source: "ids.csv")
                #expect(received.status == "reading" && received.total == 0)
                #expect(try await h.core.imports.read(job: received.id))
                let job = try await h.core.imports.job(id: received.id, app: h.app.appId)
                #expect(job.total == file.customers.count && job.total > 100 && job.status == "running")
                #expect(try await Self.count("import_uploads", h) == 0, "the file's parts are gone once it is read")

                // Stopped after 30 customers (Ctrl-C): what was done stays done.
                let imports = h.core.imports
                let stopped = Task {
                    try await imports.run(job: job.id, options: .init(concurrency: 3)) { progress in
                        if progress.doneThisRun >= 30 { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
                await #expect(throws: CancellationError.self) { try await stopped.value }
                let half = try await imports.job(id: job.id, app: h.app.appId)
                #expect(half.imported + half.notFound >= 30 && half.imported + half.notFound < job.total, "\(half)")
                #expect(half.status == "incomplete")

                // Run again: the rest.
                let first = NIOLockedValueBox<ImportProgress?>(nil)
                let later = try await imports.run(job: job.id, options: .init(concurrency: 3)) { progress in
                    first.withLockedValue { if $0 == nil { $0 = progress } }
                }
                #expect(later.isEmpty)
                // The rest: on PostgreSQL a customer whose transaction was committing when the run was cancelled may
                // land just after the run gave up on it (done all the same), so up to the run's concurrency fewer.
                let rest = job.total - half.imported - half.notFound
                let pendingAtStart = first.withLockedValue { $0 }?.pendingAtStart ?? -1
                #expect(pendingAtStart <= rest && pendingAtStart >= rest - 3, "\(pendingAtStart) of \(rest)")
                let finished = try await imports.job(id: job.id, app: h.app.appId)
                #expect(finished.status == "done" && finished.imported == job.total && finished.failed == 0, "\(finished)")
                #expect(try await imports.problems(job: job.id, app: h.app.appId).isEmpty)

                let after = try await rig.differences(client, events: false)
                #expect(after.isEmpty, "after the import:\n\(after.prefix(5).joined(separator: "\n"))")
                let deliveries = try await Self.count("deliveries", h)
                let events = try await Self.count("events", h)
                #expect(events > 200, "the import recorded the customers' history as events: \(events)")
                #expect(deliveries == 0, "imported history is not sent to destinations unless asked")

                // The same file again: the same job, nothing to do. A new job of the same customers changes nothing either.
                let again = try await Self.receive(h, text, source: "ids.csv", parts: 7)
                #expect(again.id == job.id && again.imported == job.total && again.status == "done")
                #expect(try await Self.count("import_uploads", h) == 0, "a file posted again is not kept")
                let fresh = try await Self.receive(h, text, source: "ids.csv", emitEvents: true)
                #expect(fresh.id != job.id)
                try await imports.run(job: fresh.id)
                #expect(try await Self.count("events", h) == events)
                #expect(try await Self.count("deliveries", h) == 0)
                #expect(try await rig.differences(client, events: false).isEmpty)

                // Metrics from imported history equal the simulator's bookkeeping.
                let expected = await store.with { $0.expectedMetrics() }
                let key = headers(h.app.secretKey)
                #expect(
                    try await client.execute(
                        uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: Storefront.ratesCSV())
                    )
                    .status == .ok)
                let overview = try decode(
                    MetricsOverview.self,
                    try await client.execute(
                        uri: "/v1/apps/\(h.app.appId)/metrics/overview?environment=Sandbox", method: .get, headers: key))
                #expect(overview.activeSubscriptions == expected.activeSubscriptions && expected.activeSubscriptions > 5, "\(overview)")
                #expect(overview.activeTrials == expected.activeTrials, "\(overview) vs \(expected)")
                #expect(
                    abs(overview.mrr - expected.mrr) < 0.01 + 0.0005 * Double(expected.activeSubscriptions), "\(overview) vs \(expected)")
            }
        }
    }

    @Test("ids Apple does not know are reported as not found, with the ids; a customer owned by someone else fails alone")
    func notFound() async throws {
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 5, start: at(0)))
        let api = FakeServerAPI(store: store, bundleId: bundleId, publicKey: Self.signingKey.publicKey)
        try await store.with { model in
            try model.addCustomer("ann")
            _ = try model.subscribe("ann", product: "pro.monthly", offer: .none)
        }
        let annTransaction = try #require(await store.with { $0.customerIds().first?.transactionIds.first })
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: Self.signingKey) { credentials in
            let h = try await Harness.make(.sqlite, policy: .keep, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { _ in try await Self.notFound(h, annTransaction: annTransaction) }
        }
    }

    static func notFound(_ h: Harness, annTransaction: String) async throws {
        let csv = "app_user_id,transaction_id\nann,\(annTransaction)\nzed,999999\nbea,\(annTransaction)\n"
        let job = try await Self.receive(h, csv, source: "x.csv")
        // One at a time: ann takes the subscription first, and the app keeps it with her (policy keep).
        try await h.core.imports.run(job: job.id, options: .init(concurrency: 1))
        let status = try await h.core.imports.job(id: job.id, app: h.app.appId)
        #expect(status.imported == 1 && status.notFound == 1 && status.failed == 1, "\(status)")
        let problems = try await h.core.imports.problems(job: job.id, app: h.app.appId)
        #expect(problems.map(\.line) == [3, 4])
        #expect(problems[0].outcome == "notFound" && problems[0].reason.contains("999999"))
        #expect(problems[1].outcome == "failed" && problems[1].appUserId == "bea")
    }

    @Test("over HTTP: the file is posted (202, the job), imported in the background, the job and its error file read back")
    func overHTTP() async throws {
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 6, start: at(0)))
        try await store.with { model in
            for name in ["ann", "bob"] {
                try model.addCustomer(name)
                _ = try model.subscribe(name, product: "pro.monthly", offer: .none)
            }
        }
        let ids = await store.with { $0.customerIds() }
        let api = FakeServerAPI(store: store, bundleId: bundleId, publicKey: Self.signingKey.publicKey)
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: Self.signingKey) { credentials in
            let h = try await Harness.make(.sqlite, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { client in
                var csv = "app_user_id,transaction_id\n"
                for customer in ids { csv += "\(customer.appUserId),\(customer.transactionIds[0])\n" }
                csv += "zed,999999\nyan,abc\n"
                var fields = headers(h.app.secretKey)
                fields[.contentType] = "text/csv"
                let path = "/v1/apps/\(h.app.appId)/imports"
                let posted = try await client.execute(
                    uri: path + "?rate=0&name=ids.csv", method: .post, headers: fields, body: ByteBuffer(string: csv))
                #expect(posted.status == .accepted)
                let job = try decode(ImportJobStatus.self, posted)
                #expect(job.status == "reading" && job.source == "ids.csv")
                try await eventually("the import is done", seconds: 30) {
                    let read = try await client.execute(uri: "\(path)/\(job.id)", method: .get, headers: headers(h.app.secretKey))
                    return (try? decode(ImportJobStatus.self, read))?.status == "done"
                }
                let done = try decode(
                    ImportJobStatus.self,
                    try await client.execute(uri: "\(path)/\(job.id)", method: .get, headers: headers(h.app.secretKey)))
                #expect(done.imported == 2 && done.notFound == 1 && done.failed == 0, "\(done)")
                #expect(done.total == 3 && done.droppedLines == 1)
                let problems = try await client.execute(uri: "\(path)/\(job.id)/problems", method: .get, headers: headers(h.app.secretKey))
                let text = String(buffer: problems.body)
                #expect(text.hasPrefix(ImportProblemCSV.header) && text.contains("zed,999999,notFound") && text.contains(",dropped,"))
                let list = try await client.execute(uri: path, method: .get, headers: headers(h.app.secretKey))
                #expect(String(buffer: list.body).contains(job.id))
                let customer = try await client.execute(
                    uri: TruthCheck.customerPath(ids[0].appUserId), method: .get, headers: headers(h.app.secretKey))
                #expect(customer.status == .ok && String(buffer: customer.body).contains("pro.monthly"))

                let again = try await client.execute(uri: path, method: .post, headers: fields, body: ByteBuffer(string: csv))
                #expect(try decode(ImportJobStatus.self, again).id == job.id)
                let bogus = try await client.execute(
                    uri: path + "?format=excel", method: .post, headers: fields, body: ByteBuffer(string: csv))
                #expect(bogus.status == .badRequest)
                // A header without the format's columns is refused at once; a file that names no customer fails its job.
                let header = try await client.execute(
                    uri: path, method: .post, headers: fields, body: ByteBuffer(string: "user,purchase\nann,1\n"))
                #expect(header.status == .badRequest && String(buffer: header.body).contains("needs app_user_id"))
                let nothing = try await client.execute(uri: path, method: .post, headers: fields, body: ByteBuffer())
                #expect(nothing.status == .badRequest && String(buffer: nothing.body).contains("empty"))
                let empty = try await client.execute(
                    uri: path, method: .post, headers: fields, body: ByteBuffer(string: "app_user_id,transaction_id\n"))
                #expect(empty.status == .accepted)
                let emptyJob = try decode(ImportJobStatus.self, empty)
                try await eventually("the empty file's job has failed", seconds: 30) {
                    let read = try await client.execute(uri: "\(path)/\(emptyJob.id)", method: .get, headers: headers(h.app.secretKey))
                    let status = try? decode(ImportJobStatus.self, read)
                    return status?.status == "failed" && status?.detail?.contains("names no customer") == true
                }
                let missing = try await client.execute(uri: "\(path)/imp_nope", method: .get, headers: headers(h.app.secretKey))
                #expect(missing.status == .notFound)
                let publicKey = try await client.execute(uri: path, method: .get, headers: headers(h.app.publicKey))
                #expect(publicKey.status == .forbidden)
            }
        }
    }

    @Test("an app without App Store Server API credentials cannot import: a named error before anything starts")
    func noCredentials() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { _ in
            let csv = "app_user_id,transaction_id\nann,1000\n"
            await #expect {
                _ = try await Self.receive(h, csv, source: "x.csv")
            } throws: { ($0 as? CoreError)?.description.contains("App Store Server API key") == true }
            let stored = try await Self.count("import_uploads", h)
            #expect(stored == 0)
        }
    }

    /// Posts `text` to the core as an upload would come, in `parts` pieces.
    static func receive(_ h: Harness, _ text: String, source: String, emitEvents: Bool = false, parts: Int = 1) async throws
        -> ImportJobStatus
    {
        let bytes = Array(text.utf8)
        let size = max(1, (bytes.count + parts - 1) / parts)
        let buffers = stride(from: 0, to: bytes.count, by: size).map { ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)]) }
        return try await h.core.imports.receive(
            AsyncStream { continuation in
                for buffer in buffers { continuation.yield(buffer) }
                continuation.finish()
            }, format: nil, app: h.app.appId, source: source, emitEvents: emitEvents)
    }

    static func count(_ table: String, _ h: Harness) async throws -> Int {
        try await h.core.database.reading { session in
            try await session.sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first().map {
                try $0.decode(column: "n", as: Int.self)
            } ?? 0
        }
    }
}
