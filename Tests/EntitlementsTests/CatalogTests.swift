import Foundation
import TestSupport
import Testing

@testable import Entitlements

@Suite struct CatalogTests {
    func instant(_ year: Int64, _ month: Int64, _ day: Int64, hour: Int64 = 0) -> Int64 {
        CivilCalendar.days(year: year, month: month, day: day) * 86_400_000 + hour * 3_600_000
    }

    @Test func civilDaysMatchKnownDates() {
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilCalendar.days(year: 2026, month: 1, day: 1) * 86_400_000 == 1_767_225_600_000)
        #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let date = CivilCalendar.civil(days: days)
            #expect(CivilCalendar.days(year: date.year, month: date.month, day: date.day) == days)
        }
    }

    @Test(
        arguments: [
            ("P1M", (2026, 1, 31), (2026, 2, 28)),
            ("P1M", (2028, 1, 31), (2028, 2, 29)),
            ("P1M", (2026, 12, 15), (2027, 1, 15)),
            ("P1Y", (2028, 2, 29), (2029, 2, 28)),
            ("P1Y", (2026, 1, 1), (2027, 1, 1)),
            ("P2W", (2026, 1, 25), (2026, 2, 8)),
            ("P3D", (2026, 2, 27), (2026, 3, 2)),
            ("P6M", (2026, 8, 31), (2027, 2, 28)),
            ("P1Y2M10D", (2026, 1, 1), (2027, 3, 11)),
        ] as [(String, (Int64, Int64, Int64), (Int64, Int64, Int64))])
    func durationsAddOnTheCalendar(text: String, from: (Int64, Int64, Int64), to: (Int64, Int64, Int64)) throws {
        let duration = try ISO8601Duration(text)
        #expect(duration.added(to: instant(from.0, from.1, from.2, hour: 13)) == instant(to.0, to.1, to.2, hour: 13))
    }

    @Test func timeDurations() throws {
        #expect(try ISO8601Duration("PT12H").added(to: 0) == 12 * 3_600_000)
        #expect(try ISO8601Duration("PT1H30M5S").added(to: 0) == 5_405_000)
        #expect(try ISO8601Duration("P1DT1H").added(to: 0) == 90_000_000)
    }

    @Test(arguments: ["", "P", "1M", "PT", "P1", "P1X", "PM", "P1M1M", "PT1D", "P-1M", "P1.5M", "P1234567D", "p1m", "P1MT"])
    func malformedDurationsAreRejected(text: String) {
        #expect(throws: CatalogError.self) { try ISO8601Duration(text) }
    }

    @Test func catalogsAreValidated() throws {
        #expect(throws: CatalogError.self) {
            try Catalog(products: [CatalogProduct(id: "a", type: .consumable), CatalogProduct(id: "a", type: .consumable)])
        }
        #expect(throws: CatalogError.self) { try Catalog(products: [CatalogProduct(id: "m", type: .autoRenewable)]) }
        #expect(throws: CatalogError.self) { try Catalog(products: [CatalogProduct(id: "p", type: .nonRenewing)]) }
        #expect(throws: CatalogError.self) { try Catalog(products: [CatalogProduct(id: "", type: .consumable)]) }
        #expect(throws: CatalogError.self) {
            try Catalog(products: [CatalogProduct(id: "l", type: .nonConsumable, entitlements: [""])])
        }
        let catalog = try Catalog(products: [
            CatalogProduct(id: "m", type: .autoRenewable, group: "g", entitlements: ["pro", "ads"]),
            CatalogProduct(id: "l", type: .nonConsumable, entitlements: ["pro"]),
        ])
        #expect(catalog.entitlementIds == ["ads", "pro"])
        #expect(catalog.groups == ["g"])
    }

    @Test func catalogJSONRoundTrips() throws {
        let json =
            #"{"products": [{"id": "m", "type": "autoRenewable", "group": "g", "period": "P1M", "entitlements": ["pro"], "level": 1}, {"id": "pass", "type": "nonRenewing", "duration": "P1Y"}]}"#
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(json.utf8))
        #expect(catalog["m"]?.period?.months == 1)
        #expect(catalog["pass"]?.entitlements == [])
        let again = try JSONDecoder().decode(Catalog.self, from: JSONEncoder().encode(catalog))
        #expect(again == catalog)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Catalog.self, from: Data(#"{"products": [{"id": "m", "type": "autoRenewable"}]}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Catalog.self, from: Data(#"{"products": [{"id": "m", "type": "subscription"}]}"#.utf8))
        }
    }

    @Test("a written catalog refuses a field it does not know, naming it; a stored or served one reads past it")
    func writtenCatalogRefusesUnknownFields() throws {
        let misspelt =
            #"{"products": [{"id": "l", "type": "nonConsumable", "entitlements": ["pro"]}, {"id": "m", "type": "nonConsumable", "entitlement": ["pro"]}]}"#
        #expect(try JSONDecoder().decode(Catalog.self, from: Data(misspelt.utf8))["m"]?.entitlements == [])
        do {
            _ = try JSONDecoder().decode(WrittenCatalog.self, from: Data(misspelt.utf8))
            Issue.record("a misspelt field was read as a product that unlocks nothing")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["products", "1", "entitlement"])
            #expect(context.debugDescription == "'entitlement' is not a field of a product")
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(WrittenCatalog.self, from: Data(#"{"products": [], "product": []}"#.utf8))
        }
        let written = try JSONDecoder().decode(
            WrittenCatalog.self,
            from: Data(#"{"products": [{"id": "m", "type": "autoRenewable", "group": "g", "entitlements": ["pro"]}]}"#.utf8))
        #expect(written.catalog["m"]?.entitlements == ["pro"])
        // What `Catalog` refuses, a written catalog refuses the same way.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(WrittenCatalog.self, from: Data(#"{"products": [{"id": "m", "type": "autoRenewable"}]}"#.utf8))
        }
    }
}
