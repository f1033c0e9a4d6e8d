import Analytics
import Configuration
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// The exchange rates kept current by themselves: the ECB's feed, against a local fake of it, and the bundled fallback.
@Suite("Exchange rates: the ECB feed and the bundled fallback")
struct RatesFeedTests {
    static func fixture() throws -> String {
        let url = try #require(Bundle.module.url(forResource: "eurofxref-hist-90d", withExtension: "xml", subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test("the ECB's XML: every day's rates to USD (the euro's is the USD rate, another's USD ÷ its rate per euro)")
    func parse() throws {
        let feed = try ECBReferenceRates.parse(try Self.fixture())
        #expect(feed.days.count == 65 && feed.days.max()?.description == "2026-10-30" && feed.daysWithoutUSD.isEmpty)
        let last = feed.rates.filter { $0.day.description == "2026-10-30" }
        #expect(last.first { $0.currency == "EUR" }?.usdPerUnit == 1.1172)
        let yen = try #require(last.first { $0.currency == "JPY" }?.usdPerUnit)
        #expect(abs(yen - 1.1172 / 175.68) < 1e-12)
        #expect(!feed.rates.contains { $0.currency == "USD" })
        // The bundled fallback is that same day.
        #expect(FallbackRates.day.description == "2026-10-30")
        for rate in FallbackRates.rates {
            let fed = try #require(last.first { $0.currency == rate.currency }, "\(rate.currency)")
            #expect(abs(fed.usdPerUnit - rate.usdPerUnit) < 1e-12)
        }
    }

    @Test("what is not the ECB's feed is refused with the line; a day without USD is left out and named")
    func refusals() throws {
        let envelope = { (body: String) in
            "<gesmes:Envelope xmlns=\"http://www.ecb.int/vocabulary/2002-08-01/eurofxref\"><Cube>\(body)</Cube></gesmes:Envelope>"
        }
        for (text, words) in [
            ("<html>Service unavailable</html>", "not the ECB's reference rates"),
            (envelope("<Cube time='2026-11-02'><Cube currency='JPY' rate='-1'/></Cube>"), "not a positive number"),
            (envelope("<Cube time='2026-13-45'></Cube>"), "not a day"),
            (envelope("<Cube currency='JPY' rate='175'/>"), "outside a day"),
            ("<gesmes:Envelope><Cube><Cube time='2026-11-02'><Cube currency='JPY' rate='175'", "never ends"),
            (envelope(""), "quotes no day"),
        ] {
            #expect {
                _ = try ECBReferenceRates.parse(text)
            } throws: { ($0 as? AnalyticsError)?.description.contains(words) == true }
        }
        let partial = try ECBReferenceRates.parse(
            envelope(
                "<Cube time='2026-11-03'><Cube currency='USD' rate='1.1'/></Cube><Cube time='2026-11-02'><Cube currency='JPY' rate='175'/></Cube>"
            ))
        #expect(partial.daysWithoutUSD.map(\.description) == ["2026-11-02"])
        #expect(partial.rates.map(\.currency) == ["EUR"])
    }

    @Test(
        "the feed against a local fake: stored and recorded; again, nothing new; malformed, unreachable or down: recorded, the rates kept")
    func feed() async throws {
        let xml = try Self.fixture()
        let router = Router()
        router.get("/ok.xml") { _, _ in xml }
        router.get("/bad.xml") { _, _ in "<html>maintenance</html>" }
        router.get("/down.xml") { _, _ -> Response in Response(status: .serviceUnavailable) }
        let fake = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let base = "http://127.0.0.1:\(try #require(fakeClient.port))"
            let h = try await Harness.make(.sqlite)
            try await h.test { client in
                let database = h.core.database
                // A fresh install converts at the bundled fallback until a source answers (the server loaded it at start,
                // or this does; once only).
                try await database.writing { try await $0.loadFallbackRates() }
                #expect(try await database.writing { try await $0.loadFallbackRates() } == 0)
                let fresh = try await database.reading { try await $0.ratesStanding() }
                #expect(fresh.fallbackCurrencies == FallbackRates.rates.count && fresh.latestDay == "2026-10-30")
                let before = try await h.core.analytics.ratesNote(feedURL: base + "/ok.xml")
                #expect(
                    before.text.contains("the bundled fallback") && before.text.contains("has not answered yet") && before.attention,
                    "\(before)")

                let ok = await h.core.ratesFeed(url: base + "/ok.xml").fetch()
                #expect(ok.error == nil && ok.latestDay?.description == "2026-10-30", "\(ok)")
                #expect(ok.stored > 65 * 25, "\(ok.stored)")
                let fed = try await database.reading { try await $0.ratesStanding() }
                #expect(fed.fallbackCurrencies == 0 && fed.latestDay == "2026-10-30")
                let record = try #require(try await database.reading { try await $0.rateFeed(url: base + "/ok.xml") })
                #expect(record.succeededAt != nil && record.error == nil && record.latestDay?.description == "2026-10-30")
                let note = try await h.core.analytics.ratesNote(feedURL: base + "/ok.xml")
                #expect(
                    note.text.contains("the latest of 2026-10-30") && note.text.contains("Fetched from") && !note.text.contains("fallback")
                        && !note.attention, "\(note)")
                // The next day's fetch of the same file stores nothing (and converts nothing again).
                #expect(await h.core.ratesFeed(url: base + "/ok.xml").fetch().stored == 0)
                // A purchase older than every rate converts at the first; one inside the quarter at its own day's.
                let early = try #require(try await database.reading { try await $0.usdRate(currency: "JPY", onOrBefore: 0) })
                #expect(CalendarDay(daysSinceEpoch: early.day).description == "2026-08-03")
                let sunday = try #require(CalendarDay("2026-09-06")).daysSinceEpoch
                let mid = try #require(try await database.reading { try await $0.usdRate(currency: "JPY", onOrBefore: sunday) })
                #expect(CalendarDay(daysSinceEpoch: mid.day).description == "2026-09-04")  // a Sunday: Friday's rate

                for (path, words) in [("/bad.xml", "not the ECB's reference rates"), ("/down.xml", "HTTP 503")] {
                    let failed = await h.core.ratesFeed(url: base + path).fetch()
                    #expect(failed.error?.contains(words) == true, "\(failed)")
                    #expect(failed.stored == 0)
                }
                var nowhere = h.core.ratesFeed(url: "http://127.0.0.1:1/eurofxref.xml")
                nowhere.timeout = .seconds(1)
                let unreachable = await nowhere.fetch()
                #expect(unreachable.error?.contains("could not be reached") == true)
                let after = try await database.reading { try await $0.ratesStanding() }
                #expect(after == fed)
                let failedNote = try await h.core.analytics.ratesNote(feedURL: base + "/bad.xml")
                #expect(
                    failedNote.text.contains("The last fetch of") && failedNote.text.contains("failed") && failedNote.attention,
                    "\(failedNote)")

                // An operator's own rates replace the feed's for that day, and the API reads them.
                let put = try await client.execute(
                    uri: "/v1/rates", method: .put, headers: operatorHeaders(),
                    body: ByteBuffer(string: "date,currency,usd_per_unit\n2026-10-30,JPY,0.0065\n"))
                #expect(put.status == .ok)
                let yen = try #require(try await database.reading { try await $0.usdRate(currency: "JPY", onOrBefore: 30_000) })
                #expect(yen.rate == 0.0065)
            }
        }
    }

    @Test("the fetch is due at 15:30 UTC after a success, and 1, 2, 4 … up to 60 minutes after failures in a row")
    func schedule() {
        let morning = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 08:00 UTC
        let hour: TimeInterval = 3600
        #expect(RatesFeed.next(after: morning, failures: 0).timeIntervalSince(morning) == 7.5 * hour)
        let evening = morning.addingTimeInterval(10 * hour)
        let tomorrow: TimeInterval = 31.5 * hour
        #expect(RatesFeed.next(after: evening, failures: 0).timeIntervalSince(morning) == tomorrow)
        #expect(RatesFeed.next(after: morning, failures: 1).timeIntervalSince(morning) == 60)
        #expect(RatesFeed.next(after: morning, failures: 3).timeIntervalSince(morning) == 240)
        #expect(RatesFeed.next(after: morning, failures: 12).timeIntervalSince(morning) == 3600)
    }

    @Test("STOREKEEPER_RATES_URL: the ECB's 90 days by default, off when empty or off, an http(s) URL otherwise")
    func setting() throws {
        func settings(_ value: String?) throws -> CoreSettings {
            var values: [AbsoluteConfigKey: ConfigValue] = [:]
            if let value {
                values[AbsoluteConfigKey(stringLiteral: CoreSettings.Key.ratesURL)] = ConfigValue(.string(value), isSecret: false)
            }
            return try CoreSettings(reader: ConfigReader(providers: [InMemoryProvider(values: values)]))
        }
        #expect(try settings(nil).ratesURL == RatesFeed.ecb90Days)
        #expect(try settings("").ratesURL == nil && settings("off").ratesURL == nil)
        #expect(try settings("http://127.0.0.1:9/rates.xml").ratesURL == "http://127.0.0.1:9/rates.xml")
        #expect(throws: SettingError.self) { _ = try settings("ftp://example.com/rates.xml") }
    }
}
