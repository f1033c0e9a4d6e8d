import AppStore
import Crypto
import Foundation
import Logging
import Storage

/// How far a job has come.
public struct ImportProgress: Sendable, Hashable {
    public var total: Int
    /// Customers done, by earlier runs of the job too.
    public var counts: ImportCounts
    /// Customers done by this run.
    public var doneThisRun: Int
    /// Customers this run set out to do.
    public var pendingAtStart: Int
    /// Customers this run left to a later run (Apple unreachable, or its rate limit longer than an hour).
    public var retryLater: Int
    public var elapsed: Duration
}

/// A job, as its readers see it.
public struct ImportJobStatus: Codable, Sendable, Hashable {
    public var id: String
    public var appId: String
    public var format: String
    public var source: String
    /// `reading` (the file is stored and waits to be read), `running`, `done` (every customer imported, not found, or failed for good), `incomplete` (some wait for
    /// another run) or `failed` (stopped by an error that is no customer's; `detail` says which).
    public var status: String
    public var detail: String?
    public var total: Int
    public var imported: Int
    public var notFound: Int
    public var failed: Int
    /// Lines of the file that named nothing to import.
    public var droppedLines: Int
    public var emitEvents: Bool
    public var createdAt: Int64
    public var updatedAt: Int64
}

/// A customer not imported, or a line of the file left out, with the reason: a line of the error file.
public struct ImportProblem: Codable, Sendable, Hashable {
    public var line: Int
    public var appUserId: String
    public var transactionIds: [String]
    /// `notFound` (Apple knows none of the ids), `failed`, `retryLater` or `dropped` (the line names nothing to import).
    public var outcome: String
    public var reason: String

    public init(line: Int, appUserId: String, transactionIds: [String], outcome: String, reason: String) {
        self.line = line
        self.appUserId = appUserId
        self.transactionIds = transactionIds
        self.outcome = outcome
        self.reason = reason
    }
}

/// Imports existing customers from Apple: for each customer of the operator's file, the transaction history and
/// subscription statuses from the App Store Server API, stored as facts as if notified, linked to the app user id,
/// and the customer's state, events and ledger computed, in one transaction per customer that also marks the customer
/// done (a crash or Ctrl-C resumes where it stopped). Importing twice, or importing what notifications also bring,
/// changes nothing. The events an import records are in the customer's event stream (recorded at the import's time,
/// effective when they happened) but not sent to the app's destinations unless the job asks (`emitEvents`).
public struct CustomerImports: Sendable {
    let database: StorageDatabase
    let registry: AppRegistry
    let recomputer: StateRecomputer
    let cache: CustomerStateCache
    let appleAPI: AppleAPIAccess?
    let logger: Logger
    let clock: @Sendable () -> Date

    /// How a run goes.
    public struct RunOptions: Sendable {
        /// Customers imported at once.
        public var concurrency = 4
        /// Customers started per second (each costs Apple a history call and a statuses call; Apple allows 50 calls a
        /// second per endpoint in production and 5 in the sandbox); nil for no pacing (a local fake).
        public var perSecond: Double?
        public init(concurrency: Int = 4, perSecond: Double? = nil) {
            self.concurrency = concurrency
            self.perSecond = perSecond
        }

        /// Apple's documented limit for the environments an app asks in: production's (50 a second) when it allows
        /// production, the sandbox's (5) otherwise.
        public static func applesLimit(for app: AppRuntime) -> Double { app.config.allowedEnvironments.contains(.production) ? 50 : 5 }
    }

    /// A run paced at Apple's documented limit for the job's app: production's when it allows production.
    func applesPace(job id: String) async throws -> RunOptions {
        guard let job = try await database.reading({ try await $0.importJob(id: id) }) else { throw CoreError.notFound("no import \(id)") }
        let app = try await registry.app(id: job.appId)
        return RunOptions(perSecond: RunOptions.applesLimit(for: app))
    }

    public func job(id: String, app appId: String) async throws -> ImportJobStatus {
        guard let job = try await database.reading({ try await $0.importJob(id: id) }), job.appId == appId else {
            throw CoreError.notFound("no import \(id)")
        }
        return try await status(of: job)
    }

    /// An app's last hundred jobs, newest first: their rows and counts, never their customers.
    public func jobs(app appId: String) async throws -> [ImportJobStatus] {
        let (jobs, counts) = try await database.reading { session in
            let jobs = try await session.importJobs(app: appId, limit: 100)
            return (jobs, try await session.importCounts(jobs: jobs.map(\.id)))
        }
        return jobs.map { Self.status(of: $0, counts: counts[$0.id] ?? ImportCounts()) }
    }

    /// The job's customers not imported and the lines its file left out, in the file's order.
    public func problems(job id: String, app appId: String) async throws -> [ImportProblem] {
        guard let job = try await database.reading({ try await $0.importJob(id: id) }), job.appId == appId else {
            throw CoreError.notFound("no import \(id)")
        }
        let (dropped, items) = try await database.reading { session in
            (try await session.importDropped(job: id), try await session.importProblems(job: id))
        }
        var lines: [Int: Int] = [:]
        for chunk in stride(from: 0, to: items.count, by: 500) {
            let some = items[chunk..<min(chunk + 500, items.count)].map(\.item)
            for customer in try await database.reading({ try await $0.importCustomers(job: id, items: some) }) {
                lines[customer.item] = customer.line
            }
        }
        var problems = dropped.map {
            ImportProblem(line: $0.line, appUserId: "", transactionIds: [], outcome: "dropped", reason: $0.reason)
        }
        for item in items {
            problems.append(
                ImportProblem(
                    line: lines[item.item] ?? 0, appUserId: item.appUserId,
                    transactionIds: item.transactionIds.split(separator: " ").map(String.init), outcome: item.outcome,
                    reason: item.detail))
        }
        return problems.sorted { ($0.line, $0.outcome) < ($1.line, $1.outcome) }
    }

    func status(of job: ImportJobRecord) async throws -> ImportJobStatus {
        Self.status(of: job, counts: try await database.reading { try await $0.importCounts(job: job.id) })
    }

    static func status(of job: ImportJobRecord, counts: ImportCounts) -> ImportJobStatus {
        ImportJobStatus(
            id: job.id, appId: job.appId, format: job.format, source: job.source, status: job.status, detail: job.detail,
            total: job.total, imported: counts.imported, notFound: counts.notFound, failed: counts.failed,
            droppedLines: job.droppedLines, emitEvents: job.emitEvents, createdAt: job.createdAt, updatedAt: job.updatedAt)
    }

    /// The customers of a job not done yet, a page at a time, in the file's order.
    struct PendingCustomers {
        let database: StorageDatabase
        let job: String
        private var page: [ImportCustomerRecord] = []
        private var next = 0
        private var after = -1
        private var ended = false

        init(database: StorageDatabase, job: String) {
            self.database = database
            self.job = job
        }

        mutating func pop() async throws -> ImportCustomerRecord? {
            if next == page.count {
                guard !ended else { return nil }
                let (job, after) = (self.job, self.after)
                page = try await database.reading { try await $0.pendingImportCustomers(job: job, after: after, limit: 256) }
                next = 0
                ended = page.count < 256
                guard let last = page.last else { return nil }
                self.after = last.item
            }
            defer { next += 1 }
            return page[next]
        }
    }

    /// Reads the job's file if it has not been read, then runs the job's customers not done yet; `progress` is called
    /// after each. Returns the customers this run left to a
    /// later one. Cancelling the task stops it between customers: what was done stays done.
    @discardableResult
    public func run(
        job id: String, options: RunOptions = RunOptions(), progress: @escaping @Sendable (ImportProgress) -> Void = { _ in }
    ) async throws -> [ImportProblem] {
        guard var job = try await database.reading({ try await $0.importJob(id: id) }) else { throw CoreError.notFound("no import \(id)") }
        if job.status == "reading" {
            guard try await read(job: id) else { return [] }
            guard let read = try await database.reading({ try await $0.importJob(id: id) }) else {
                throw CoreError.notFound("no import \(id)")
            }
            job = read
        }
        // A file that could not be read: nothing to run (running would call the job done).
        if job.status == "failed", job.total == 0 { return [] }
        let app = try await registry.app(id: job.appId)
        guard let appleAPI, app.config.serverAPI != nil else {
            throw CoreError.invalidInput(field: "app", "the app has no App Store Server API key (serverAPI in its configuration)")
        }
        var counts = try await database.reading { try await $0.importCounts(job: id) }
        let pendingAtStart = max(job.total - counts.done, 0)
        var pending = PendingCustomers(database: database, job: id)
        try await database.writing {
            try await $0.setImportJobStatus(id: id, status: "running", detail: nil, at: clock().millisecondsSince1970)
        }
        let pacer = options.perSecond.flatMap { $0 > 0 ? SlotPacer(perSecond: $0) : nil }
        let started = ContinuousClock.now
        var later: [ImportProblem] = []
        var doneThisRun = 0
        let importer = OneCustomer(
            database: database, recomputer: recomputer, cache: cache, appleAPI: appleAPI, app: app, job: job, clock: clock)
        do {
            try await withThrowingTaskGroup(of: ItemResult.self) { group in
                var inFlight: [Int: ImportCustomer] = [:]
                func startNext() async throws {
                    guard let record = try await pending.pop() else { return }
                    let customer = ImportCustomer(record)
                    inFlight[record.item] = customer
                    group.addTask {
                        try Task.checkCancellation()
                        await pacer?.wait()
                        return try await importer.run(customer, item: record.item)
                    }
                }
                for _ in 0..<max(options.concurrency, 1) { try await startNext() }
                while let result = try await group.next() {
                    let customer = inFlight.removeValue(forKey: result.item)
                    switch result.outcome {
                    case .imported: counts.imported += 1
                    case .notFound: counts.notFound += 1
                    case .failed: counts.failed += 1
                    case .retryLater:
                        later.append(
                            ImportProblem(
                                line: customer?.line ?? 0, appUserId: customer?.appUserId ?? "",
                                transactionIds: customer?.transactionIds ?? [], outcome: "retryLater", reason: result.detail))
                    }
                    if result.outcome != .retryLater { doneThisRun += 1 }
                    progress(
                        ImportProgress(
                            total: job.total, counts: counts, doneThisRun: doneThisRun, pendingAtStart: pendingAtStart,
                            retryLater: later.count, elapsed: ContinuousClock.now - started))
                    try await startNext()
                }
            }
        } catch {
            let stopped = error is CancellationError ? "stopped before the end: run it again to go on" : "\(error)"
            let (database, now) = (self.database, clock().millisecondsSince1970)
            // In a task of its own: this one may be cancelled, and the status must still be written.
            try? await Task {
                try await database.writing {
                    try await $0.setImportJobStatus(
                        id: id, status: error is CancellationError ? "incomplete" : "failed", detail: stopped, at: now)
                }
            }.value
            throw error
        }
        let status = later.isEmpty ? "done" : "incomplete"
        let detail = later.isEmpty ? nil : "\(later.count) customers wait for another run (Apple did not answer)"
        try await database.writing {
            try await $0.setImportJobStatus(id: id, status: status, detail: detail, at: clock().millisecondsSince1970)
        }
        logger.info(
            "import run over",
            metadata: ["job": "\(id)", "imported": "\(counts.imported)", "notFound": "\(counts.notFound)", "failed": "\(counts.failed)"])
        return later
    }

    /// How one customer ended.
    struct ItemResult: Sendable {
        enum Outcome: String, Sendable { case imported, notFound, failed, retryLater }
        var item: Int
        var outcome: Outcome
        var detail: String
    }

    /// Imports one customer of a job.
    struct OneCustomer: Sendable {
        let database: StorageDatabase
        let recomputer: StateRecomputer
        let cache: CustomerStateCache
        let appleAPI: AppleAPIAccess
        let app: AppRuntime
        let job: ImportJobRecord
        let clock: @Sendable () -> Date

        /// The environments to ask in, production first: the file's, or the app's of Apple's two.
        func environments(_ customer: ImportCustomer) -> [Environment] {
            if let named = customer.environment { return app.accepts(Environment(rawValue: named)) ? [Environment(rawValue: named)] : [] }
            return [Environment.production, .sandbox].filter { app.config.allowedEnvironments.contains($0) }
        }

        /// Apple's answers that mean it does not know the id (in this environment).
        static func isNotFound(_ error: AppStoreServerAPIError) -> Bool {
            guard case .api(let code, _) = error.kind else { return false }
            return [4_040_010, 4_040_005, 4_040_001, 4_000_006].contains(code)
        }

        func run(_ customer: ImportCustomer, item: Int) async throws -> ItemResult {
            let now = clock().millisecondsSince1970
            let environments = environments(customer)
            var pulled = AppleAPIAccess.Pulled()
            var covered: Set<String> = []
            var unknown: [String] = []
            for id in customer.transactionIds where !covered.contains(id) {
                var found = false
                for environment in environments {
                    do {
                        guard let client = try await appleAPI.client(app: app, environment: environment, patience: .batch) else { break }
                        let answer = try await appleAPI.fetch(client, app: app, transactionId: id, now: now, history: true)
                        pulled.transactions += answer.transactions
                        pulled.renewals += answer.renewals
                        covered.formUnion(answer.transactions.map(\.transactionId))
                        found = true
                        break
                    } catch let error as AppStoreServerAPIError {
                        if Self.isNotFound(error) { continue }
                        if error.isRetryable {
                            return ItemResult(item: item, outcome: .retryLater, detail: "App Store Server API: \(error)")
                        }
                        return try await record(customer, item: item, outcome: .failed, detail: "App Store Server API: \(error)", now: now)
                    } catch let error as CoreError {
                        return try await record(customer, item: item, outcome: .failed, detail: error.description, now: now)
                    }
                }
                if !found { unknown.append(id) }
            }
            guard !pulled.transactions.isEmpty else {
                let names = environments.map(\.rawValue).joined(separator: " or ")
                let detail =
                    unknown.isEmpty
                    ? "Apple's answer holds no transaction in the app's environments"
                    : "Apple knows no transaction \(unknown.joined(separator: ", ")) in \(names.isEmpty ? "the app's environments" : names)"
                return try await record(customer, item: item, outcome: .notFound, detail: detail, now: now)
            }
            do {
                return try await store(pulled, customer: customer, item: item, unknown: unknown, now: now)
            } catch let error as CoreError {
                if case .storage = error { throw error }
                return try await record(customer, item: item, outcome: .failed, detail: error.description, now: now)
            }
        }

        /// Marks a customer done without importing anything.
        func record(_ customer: ImportCustomer, item: Int, outcome: ItemResult.Outcome, detail: String, now: Int64) async throws
            -> ItemResult
        {
            let record = ImportItemRecord(
                jobId: job.id, item: item, outcome: outcome.rawValue, appUserId: customer.appUserId ?? "",
                transactionIds: customer.transactionIds.joined(separator: " "), detail: detail, doneAt: now)
            _ = try await database.writing { try await $0.recordImportItem(record) }
            return ItemResult(item: item, outcome: outcome, detail: detail)
        }

        struct Written: Sendable {
            var recomputed: [RecomputedCustomer]
            var namesChanged: Bool
            var detail: String
        }

        /// Stores what Apple said, links it to the customer, recomputes the owners and marks the customer done: one
        /// transaction.
        func store(_ pulled: AppleAPIAccess.Pulled, customer: ImportCustomer, item: Int, unknown: [String], now: Int64) async throws
            -> ItemResult
        {
            let originals = Set(pulled.transactions.map(\.originalTransactionId)).sorted()
            let tokens = FactCoding.accountTokens(pulled.transactions)
            let (app, job, recomputer) = (self.app, self.job, self.recomputer)
            let written = try await database.writing { session -> Written in
                var owners: [String] = []
                var namesChanged = false
                var notes: [String] = []
                if let name = customer.appUserId {
                    let appUserId = try AppUserIds.validate(name, posting: true)
                    let linked = try await PurchaseLinking.link(
                        originalTransactionIds: originals, to: appUserId, app: app, session: session, now: now)
                    owners = [linked.customerId] + linked.previousOwners.sorted()
                    namesChanged = linked.merged
                    for alias in customer.aliases {
                        guard let alias = try? AppUserIds.validate(alias, posting: true) else { continue }
                        if let other = try await session.customer(app: app.id, appUserId: alias) {
                            if other.id != linked.customerId { notes.append("alias \(alias) names another customer: left alone") }
                        } else if try await session.addAppUserId(app: app.id, appUserId: alias, customer: linked.customerId, at: now) {
                            namesChanged = true
                        }
                    }
                    if let token = customer.appAccountToken, token != appUserId.lowercased() {
                        try await session.registerAccountToken(app: app.id, token: token, appUserId: appUserId, at: now)
                    }
                } else {
                    // Unnamed: each original goes to the customer a notification would give it.
                    namesChanged = true
                    for original in originals {
                        owners.append(
                            try await NotificationOwner.resolve(
                                session, app: app, appAccountToken: tokens[original], originalTransactionId: original, now: now))
                    }
                }
                for transaction in pulled.transactions { try await session.insert(transaction) }
                for renewal in pulled.renewals { try await session.insert(renewal) }
                var recomputed: [RecomputedCustomer] = []
                var seen: Set<String> = []
                for owner in owners where seen.insert(owner).inserted {
                    try await session.lockCustomer(id: owner)
                    let before = job.emitEvents ? 0 : try await session.lastEventSeq(app: app.id, customer: owner)
                    recomputed.append(try await recomputer.recompute(session, app: app, customerId: owner, now: now))
                    if !job.emitEvents { try await session.withholdDeliveries(app: app.id, customer: owner, after: before) }
                }
                var detail = "\(pulled.transactions.count) transactions of \(originals.count) purchases"
                if !unknown.isEmpty { detail += "; Apple knows no \(unknown.joined(separator: ", "))" }
                if !notes.isEmpty { detail += "; " + notes.joined(separator: "; ") }
                _ = try await session.recordImportItem(
                    ImportItemRecord(
                        jobId: job.id, item: item, outcome: ItemResult.Outcome.imported.rawValue, appUserId: customer.appUserId ?? "",
                        transactionIds: customer.transactionIds.joined(separator: " "), detail: detail, doneAt: now))
                return Written(recomputed: recomputed, namesChanged: namesChanged, detail: detail)
            }
            written.recomputed.forEach(recomputer.committed)
            if written.namesChanged { cache.forgetCustomerIds(app: app.id) }
            return ItemResult(item: item, outcome: .imported, detail: written.detail)
        }
    }
}
