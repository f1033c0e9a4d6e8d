import ArgumentParser
import Foundation
import NIOCore
import StorekeeperCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `storekeeper import FILE --app APP`: existing customers brought in from Apple's App Store Server API.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import existing customers: each one's history and statuses from the App Store Server API, as if notified.",
        discussion: """
            FILE names customers and any of their transaction ids: a plain CSV (app_user_id,transaction_id, optionally
            app_account_token and environment), RevenueCat's Scheduled Data Export (transactions), or Apphud's Customers
            API answers (JSON). A second run of the same file resumes it (Ctrl-C stops between customers); a finished file
            imports nothing twice. Imported history is not sent to the app's destinations unless --emit-events.
            """)

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The file of customers.") var file: String
    @Option(help: "The app to import into.") var app: String
    @Option(help: "plain, revenuecat or apphud (default: told by the file's first line).") var format: String?
    @Flag(name: .customLong("emit-events"), help: "Send the imported history's events to the app's destinations too.")
    var emitEvents = false
    @Option(help: "Customers imported at once.") var concurrency: Int = 4
    @Option(
        help:
            "Customers started per second; 0 for no pacing (a local fake). Default: Apple's documented limit, 50 a second in production and 5 in the sandbox."
    )
    var rate: Double?
    @Option(help: "Where to write the customers not imported and the lines left out (default: FILE.errors.csv).") var errors: String?

    func validate() throws {
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency is 1 to 64") }
        if let rate, rate < 0 { throw ValidationError("--rate is 0 (none) or more") }
        if let format, ImportFormat(rawValue: format) == nil { throw ValidationError("--format is plain, revenuecat or apphud") }
    }

    func run() async throws {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw UsageError(message: "cannot read \(file)") }
        defer { try? handle.close() }
        let errorsPath = errors ?? file + ".errors.csv"
        let code: Int32 = try await database.withCore { core in
            let received: ImportJobStatus
            do {
                received = try await core.imports.receive(
                    Self.chunks(of: handle), format: format.flatMap(ImportFormat.init(rawValue:)), app: app,
                    source: (file as NSString).lastPathComponent, emitEvents: emitEvents)
            } catch let error as CoreError {
                throw UsageError(message: "\(file): \(error.description)")
            }
            // Read here (the server's worker reads the jobs posted to it).
            try await core.imports.read(job: received.id)
            let job = try await core.imports.job(id: received.id, app: app)
            if job.status == "failed", job.total == 0 { throw UsageError(message: "\(file): \(job.detail ?? "the file cannot be read")") }
            let appRuntime = try await core.apps.app(id: app)
            let perSecond = rate.map { $0 > 0 ? $0 : nil } ?? CustomerImports.RunOptions.applesLimit(for: appRuntime)
            let progress = ProgressLine(terminal: isatty(STDERR_FILENO) == 1)
            let already = job.imported + job.notFound + job.failed
            print(
                "import \(job.id): \(job.total) customers in \(job.format) format"
                    + (already > 0 ? ", \(already) done by an earlier run" : "")
                    + (job.droppedLines == 0 ? "" : ", \(job.droppedLines) lines left out")
                    + (perSecond.map { String(format: ", paced at %.0f a second", $0) } ?? ", unpaced"))
            let options = CustomerImports.RunOptions(concurrency: concurrency, perSecond: perSecond)
            let later = try await Self.runStoppable { try await core.imports.run(job: job.id, options: options, progress: progress.show) }
            progress.finish()
            let finished = try await core.imports.job(id: job.id, app: app)
            let problems = try await core.imports.problems(job: job.id, app: app) + (later ?? [])
            try Self.writeErrors(problems, to: errorsPath)
            print(
                "imported \(finished.imported), not found at Apple \(finished.notFound), failed \(finished.failed)"
                    + (later.map { ", \($0.count) to retry (run again)" } ?? ", stopped: run again to go on")
                    + (finished.droppedLines == 0 ? "" : ", lines left out \(finished.droppedLines)"))
            for reason in Self.topReasons(problems) { print("  \(reason.count) × \(reason.text)") }
            if !problems.isEmpty { print("the customers not imported, line by line: \(errorsPath)") }
            return later == nil || finished.failed > 0 || !(later ?? []).isEmpty ? 1 : 0
        }
        if code != 0 { throw ExitCode(code) }
    }

    /// The file a megabyte at a time.
    static func chunks(of handle: FileHandle) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { () async throws -> ByteBuffer? in
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
            return ByteBuffer(bytes: data)
        }
    }

    /// Runs `body`, cancelled by Ctrl-C (SIGINT) or SIGTERM; nil when it was stopped so.
    static func runStoppable<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        let task = Task { try await body() }
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
        do {
            return try await task.value
        } catch is CancellationError {
            return nil
        }
    }

    struct Reason {
        var text: String
        var count: Int
    }

    /// The most frequent reasons, for the summary.
    static func topReasons(_ problems: [ImportProblem]) -> [Reason] {
        var counts: [String: Int] = [:]
        for problem in problems {
            // Ids make each reason unique: count by the reason's words.
            let words = problem.reason.split(separator: " ").map { $0.allSatisfy { $0.isNumber || $0 == "," } ? "…" : String($0) }
            counts["\(problem.outcome): " + words.joined(separator: " "), default: 0] += 1
        }
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(5).map { Reason(text: $0.key, count: $0.value) }
    }

    static func writeErrors(_ problems: [ImportProblem], to path: String) throws {
        guard !problems.isEmpty else {
            try? FileManager.default.removeItem(atPath: path)
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(ImportProblemCSV.text(problems).utf8)) else {
            throw UsageError(message: "cannot write \(path)")
        }
    }
}

/// Progress on standard error: a bar redrawn in place on a terminal, a plain line every five seconds otherwise.
final class ProgressLine: Sendable {
    let terminal: Bool
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    init(terminal: Bool) { self.terminal = terminal }

    var show: @Sendable (ImportProgress) -> Void {
        { [self] progress in
            let now = ContinuousClock.now
            let due = last.withLock { last -> Bool in
                let interval: Duration = terminal ? .milliseconds(200) : .seconds(5)
                if let previous = last, now - previous < interval, progress.doneThisRun < progress.pendingAtStart { return false }
                last = now
                return true
            }
            guard due else { return }
            FileHandle.standardError.write(Data(Self.text(progress, bar: terminal).utf8))
        }
    }

    func finish() { if terminal { FileHandle.standardError.write(Data("\n".utf8)) } }

    static func text(_ p: ImportProgress, bar: Bool) -> String {
        let done = p.counts.done
        let share = p.total == 0 ? 1 : Double(done) / Double(p.total)
        let seconds = Double(p.elapsed.components.seconds) + Double(p.elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(p.doneThisRun) / seconds : 0
        let left = p.pendingAtStart - p.doneThisRun - p.retryLater
        let eta = rate > 0 ? Self.duration(Double(max(left, 0)) / rate) : "–"
        let counts = "\(done)/\(p.total) (\(p.counts.notFound) not found, \(p.counts.failed) failed)"
        let line = String(format: "%@ %3.0f%%  %.1f/s  ETA %@", counts, share * 100, rate, eta)
        guard bar else { return "import: " + line + "\n" }
        let width = 30
        let filled = Int((share * Double(width)).rounded(.down))
        return "\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] " + line + "   "
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\((s % 3600) / 60)m" : s >= 60 ? "\(s / 60)m\(s % 60)s" : "\(s)s"
    }
}
