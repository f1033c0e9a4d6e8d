import Analytics
import AsyncHTTPClient
import Foundation
import Integrations
import Logging
import NIOCore
import ServiceLifecycle
import Storage

/// What one fetch of the rates feed did.
public struct RatesFetch: Sendable, Hashable {
    /// Rates stored that were new or changed.
    public var stored: Int
    /// The newest day the feed quoted.
    public var latestDay: CalendarDay?
    /// Days quoted without a USD rate (left out).
    public var daysWithoutUSD: [CalendarDay]
    /// Why it failed; nil when it did not.
    public var error: String?
}

/// The exchange rates kept current by themselves: a fetch of the ECB's reference rates (its XML layout) at start and
/// every day, stored as rates of source `feed`; only what is new or changed is stored, so a day with nothing new
/// converts nothing again. A failure is recorded and retried. The bundled fallback (`FallbackRates`) is loaded for
/// currencies without any rate, so that a server that reaches no source still converts.
public struct RatesFeed: Sendable {
    /// The ECB's reference rates of the last 90 days: on a first start the last quarter converts at its own days'
    /// rates, and each day's fetch also fills the days a stopped server missed.
    public static let ecb90Days = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"
    /// The largest answer read (the 90-day file is about 40 KB).
    static let maxBytes = 4 * 1024 * 1024

    let database: StorageDatabase
    let url: String
    /// A client that follows no redirect: `download` follows them itself, each checked by `addresses`.
    let httpClient: HTTPClient
    let addresses: AddressPolicy
    let metrics: ServerMetrics
    let logger: Logger
    let clock: @Sendable () -> Date
    /// How long a fetch may take (an unreachable host is retried until then).
    public var timeout: TimeAmount = .seconds(30)

    /// Fetches the feed once, stores what is new, and records the attempt.
    @discardableResult
    public func fetch() async -> RatesFetch {
        let now = clock().millisecondsSince1970
        var outcome = RatesFetch(stored: 0, latestDay: nil, daysWithoutUSD: [], error: nil)
        do {
            let feed = try ECBReferenceRates.parse(try await download())
            outcome.latestDay = feed.days.max()
            outcome.daysWithoutUSD = feed.daysWithoutUSD
            outcome.stored = try await database.writing { session in
                let fresh = try await session.newRates(feed.rates)
                return fresh.isEmpty ? 0 : try await session.importRates(fresh, source: .feed)
            }
        } catch let error as AnalyticsError {
            outcome.error = "the feed is not the ECB's reference rates: \(error.description)"
        } catch let error as RatesFeedError {
            outcome.error = error.message
        } catch {
            outcome.error = "\(error)"
        }
        let record = RateFeedRecord(
            url: url, attemptedAt: now, succeededAt: outcome.error == nil ? now : nil, latestDay: outcome.latestDay, error: outcome.error)
        do { try await database.writing { try await $0.recordRateFeed(record) } } catch {
            logger.warning("could not record the rates feed's attempt", metadata: ["error": "\(error)"])
        }
        metrics.ratesFetch(result: outcome.error == nil ? "ok" : "error", latestDay: outcome.latestDay?.daysSinceEpoch)
        if let error = outcome.error {
            logger.warning("fetching exchange rates failed", metadata: ["url": "\(url)", "error": "\(error)"])
        } else {
            logger.info(
                "exchange rates fetched",
                metadata: ["url": "\(url)", "stored": "\(outcome.stored)", "latest": "\(outcome.latestDay?.description ?? "-")"])
        }
        return outcome
    }

    struct RatesFeedError: Error {
        var message: String
    }

    /// Redirects followed at most.
    static let maxRedirects = 3

    /// The feed's text. Redirects are followed (at most `maxRedirects`) only to addresses the destinations' policy
    /// allows: a feed host that answers with a redirect to a metadata or internal address gets nothing.
    private func download() async throws -> String {
        var location = url
        var response: HTTPClientResponse
        var hops = 0
        while true {
            var request = HTTPClientRequest(url: location)
            request.headers.add(name: "User-Agent", value: "storekeeper")
            do { response = try await httpClient.execute(request, timeout: timeout) } catch {
                throw RatesFeedError(message: "\(location) could not be reached: \(error)")
            }
            guard [301, 302, 303, 307, 308].contains(response.status.code) else { break }
            _ = try? await response.body.collect(upTo: Self.maxBytes)
            guard hops < Self.maxRedirects else { throw RatesFeedError(message: "\(url): more than \(Self.maxRedirects) redirects") }
            guard let next = response.headers.first(name: "Location"), let target = URL(string: next, relativeTo: URL(string: location))
            else { throw RatesFeedError(message: "\(location) answered a redirect without a usable Location") }
            location = target.absoluteString
            do { try await addresses.check(location) } catch let refused as IntegrationError {
                throw RatesFeedError(message: "\(url) redirected to \(location), which is not followed: \(refused.message)")
            }
            hops += 1
        }
        guard response.status.code == 200 else {
            // Read to its end, so the connection goes back to the pool rather than hang on an unread body.
            _ = try? await response.body.collect(upTo: Self.maxBytes)
            throw RatesFeedError(message: "\(location) answered HTTP \(response.status.code)")
        }
        do {
            return String(buffer: try await response.body.collect(upTo: Self.maxBytes))
        } catch {
            throw RatesFeedError(message: "\(url): the answer is over \(Self.maxBytes >> 20) MB or broke off: \(error)")
        }
    }

    /// When the next fetch is due after one at `now`: a day's rates are published around 16:00 CET, so at the next
    /// 15:30 UTC after a success; after a failure, 1 minute, doubling each failure in a row up to an hour.
    public static func next(after now: Date, failures: Int) -> Date {
        if failures > 0 { return now.addingTimeInterval(min(60 * pow(2, Double(failures - 1)), 3600)) }
        let day = 86_400.0
        let publication = 15.5 * 3600
        let start = (now.timeIntervalSince1970 / day).rounded(.down) * day
        let today = start + publication
        return Date(timeIntervalSince1970: now.timeIntervalSince1970 < today ? today : today + day)
    }
}

/// Loads the fallback rates at start, then runs the feed (when one is configured) until shutdown.
public struct RatesFeedService: Service {
    let database: StorageDatabase
    let feed: RatesFeed?
    let logger: Logger

    public func run() async throws {
        do {
            let loaded = try await database.writing { try await $0.loadFallbackRates() }
            if loaded > 0 {
                logger.info("bundled fallback exchange rates loaded", metadata: ["rates": "\(loaded)", "day": "\(FallbackRates.day)"])
            }
        } catch {
            logger.warning("could not load the fallback exchange rates", metadata: ["error": "\(error)"])
        }
        guard let feed else {
            // A service that returns stops the server: this one has nothing more to do until then.
            try? await gracefulShutdown()
            return
        }
        var failures = 0
        while !Task.isCancelled {
            // A fetch under way when the server stops is given up (it may wait 30 s for an unreachable host).
            guard let outcome = try? await cancelWhenGracefulShutdown({ await feed.fetch() }), !Task.isShuttingDownGracefully else {
                return
            }
            failures = outcome.error == nil ? 0 : failures + 1
            let wait = RatesFeed.next(after: feed.clock(), failures: failures).timeIntervalSince(feed.clock())
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(Int64(max(wait, 1) * 1000))) }
            } catch {
                return
            }
        }
    }
}
