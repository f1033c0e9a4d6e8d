import Analytics
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

/// The money analytics destinations are sent equals the money ledger: every preset's revenue, summed over what
/// Amplitude and Mixpanel received (each event once, by its insert id), is the ledger's net revenue in USD, with
/// prorated refunds, reversed refunds, upgrades paid at once and retractions in the events.
@Suite("Integrations: money out equals the ledger")
struct MoneyOutTests {
    static let presets = ["storekeeper", "apphud", "revenuecat"]

    @Test("Amplitude's and Mixpanel's revenue, in every preset, sums to the ledger's net revenue")
    func revenueOutEqualsTheLedger() async throws {
        let h = try await Harness.make(.sqlite, catalog: EndToEndTests.catalog)
        h.clock.set(at(0))
        let receiver = FakeDestination { request, _ in
            if request.path.hasPrefix("/mp-") && request.path.contains("/engage") { return .init(status: 200, body: "1") }
            if request.path.hasPrefix("/mp-") {
                let count = ((try? JSONSerialization.jsonObject(with: Data(request.body))) as? [Any])?.count ?? 0
                return .init(status: 200, body: #"{"code":200,"num_records_imported":\#(count),"status":"OK"}"#)
            }
            return .init(status: 200, body: #"{"code":200}"#)
        }
        try await receiver.serve { url in
            try await h.live { client in
                let key = headers(h.app.secretKey)
                // Rates from the start, and other ones from day 10: a refund converts at its purchase's rate, as the ledger.
                let later = CalendarDay(containing: at(10)).description
                let rates =
                    Storefront.ratesCSV()
                    + Storefront.usdRates.keys.sorted().filter { $0 != "USD" }.compactMap { currency in
                        Storefront.usdRates[currency].map { "\(later),\(currency),\($0 * 1.25)" }
                    }.joined(separator: "\n") + "\n"
                let loaded = try await client.execute(
                    uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: rates))
                #expect(loaded.status == .ok, "\(String(buffer: loaded.body))")
                for preset in Self.presets {
                    for (kind, config) in [
                        ("amplitude", ["apiKey": "amp-\(preset)", "baseURL": "\(url)/amp-\(preset)", "preset": preset]),
                        ("mixpanel", ["projectToken": "mp-\(preset)", "baseURL": "\(url)/mp-\(preset)", "preset": preset]),
                    ] {
                        let created = try await client.createIntegration(
                            h, ["kind": kind, "config": config, "environments": ["Sandbox"], "name": "\(kind)-\(preset)"])
                        #expect(created.status == .created)
                    }
                }
                // Every library scenario (refunds prorated and reversed, upgrades, one-time purchases, family sharing)
                // and a population in several currencies, each its own customers.
                var scenarios = EndToEndTests.library
                scenarios.append(Population(customers: 60, days: 150, seed: 21).scenario(catalog: EndToEndTests.catalog))
                // A prorated refund that stays, in a currency with a rate change between the purchase and the refund.
                scenarios.append(
                    try Scenario.decode(
                        Data(
                            #"""
                            {"name": "prorated-refund", "steps": [
                              {"day": 0, "do": "customer", "customer": "pat", "storefront": "DEU"},
                              {"day": 0, "do": "subscribe", "customer": "pat", "product": "pro.yearly"},
                              {"day": 20, "do": "refund", "customer": "pat", "reason": "other", "percentage": 37500},
                              {"day": 25, "do": "wait"}]}
                            """#.utf8), source: "prorated-refund"))
                for (index, scenario) in scenarios.enumerated() {
                    let rig = EndToEndTests.rig(scenario: scenario, client: client, harness: h, seed: 500 + UInt64(index))
                    for step in scenario.steps { try await rig.player.play(step, lenient: true) }
                    await rig.player.drain()
                }
                // Past the end of the longest scenario (commitment-plan runs 420 days): deliveries recorded then are due.
                h.clock.set(at(500))
                try await eventually("every delivery sent", seconds: 120) {
                    let page = try await client.execute(uri: "/v1/apps/\(h.app.appId)/integrations", method: .get, headers: key)
                    let views = try decode(IntegrationList.self, page).integrations
                    for view in views
                    where try await client.deliveries(h, view.id, query: "?limit=500").contains(where: { $0.status != "delivered" }) {
                        return false
                    }
                    return views.count == 6
                }
                let ledger = try await h.core.database.reading { session in
                    try await session.sql.raw(
                        """
                        SELECT SUM(\(unsafeRaw: LedgerSummary.usd("(price - COALESCE(refund_amount, 0))"))) AS usd,
                            SUM(CASE WHEN refund_amount > 0 AND refund_amount < price THEN 1 ELSE 0 END) AS prorated
                        FROM ledger WHERE app_id = \(bind: h.app.appId) AND \(unsafeRaw: LedgerSummary.revenue)
                        """
                    ).first()
                }
                let ledgerUSD = try #require(try ledger?.decode(column: "usd", as: Double?.self))
                // Not blind: the ledger holds a prorated refund, and more than a few hundred dollars.
                #expect(try ledger?.decode(column: "prorated", as: Int.self) ?? 0 > 0)
                #expect(ledgerUSD > 100)
                for preset in Self.presets {
                    let amplitude = Self.amplitudeRevenue(receiver.received.filter { $0.path.hasPrefix("/amp-\(preset)/") })
                    let mixpanel = Self.mixpanelRevenue(receiver.received.filter { $0.path.hasPrefix("/mp-\(preset)/import") })
                    for (name, sent) in [("Amplitude", amplitude), ("Mixpanel", mixpanel)] {
                        #expect(sent.refunds > 0, "\(name) \(preset): no refund was sent as negative revenue")
                        #expect(abs(sent.total - ledgerUSD) < 0.005, "\(name) \(preset) sums \(sent.total), the ledger \(ledgerUSD)")
                    }
                }
            }
        }
    }

    struct IntegrationList: Decodable { var integrations: [IntegrationView] }

    struct Sent {
        var total = 0.0
        var refunds = 0
    }

    /// The revenue of every event Amplitude took, each insert id once.
    static func amplitudeRevenue(_ requests: [FakeDestination.Received]) -> Sent {
        var seen = Set<String>()
        var sent = Sent()
        for request in requests {
            for event in (try? request.json())?["events"] as? [[String: Any]] ?? [] {
                guard let id = event["insert_id"] as? String, seen.insert(id).inserted else { continue }
                let revenue = (event["revenue"] as? NSNumber)?.doubleValue ?? 0
                sent.total += revenue
                if revenue < 0 { sent.refunds += 1 }
            }
        }
        return sent
    }

    /// The revenue of every event Mixpanel imported, each `$insert_id` once.
    static func mixpanelRevenue(_ requests: [FakeDestination.Received]) -> Sent {
        var seen = Set<String>()
        var sent = Sent()
        for request in requests {
            for event in (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [[String: Any]] ?? [] {
                let properties = event["properties"] as? [String: Any] ?? [:]
                guard let id = properties["$insert_id"] as? String, seen.insert(id).inserted else { continue }
                let revenue = (properties["revenue"] as? NSNumber)?.doubleValue ?? 0
                sent.total += revenue
                if revenue < 0 { sent.refunds += 1 }
            }
        }
        return sent
    }
}
