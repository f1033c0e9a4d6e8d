import Entitlements

/// The catalogs the tests share.
public enum TestCatalogs {
    /// Every kind of product: two subscription groups (`pro` with two levels, `plus`), a non-consumable, a
    /// non-renewing pass and a consumable.
    public static let full: Catalog = make([
        CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro", period: duration("P1M"), entitlements: ["pro"], level: 2),
        CatalogProduct(id: "pro.yearly", type: .autoRenewable, group: "pro", period: duration("P1Y"), entitlements: ["pro"], level: 1),
        CatalogProduct(id: "plus.monthly", type: .autoRenewable, group: "plus", period: duration("P1M"), entitlements: ["plus"]),
        CatalogProduct(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
        CatalogProduct(id: "pass.year", type: .nonRenewing, duration: duration("P1Y"), entitlements: ["pass"]),
        CatalogProduct(id: "coins", type: .consumable),
    ])

    /// The server tests' app: the `pro` group and a lifetime unlock, all granting `pro`.
    public static let pro: Catalog = make(full.products.filter { ["pro.monthly", "pro.yearly", "lifetime"].contains($0.id) })

    private static func make(_ products: [CatalogProduct]) -> Catalog {
        do {
            return try Catalog(products: products)
        } catch {
            preconditionFailure("the test catalog is valid: \(error)")
        }
    }

    private static func duration(_ text: String) -> ISO8601Duration {
        do {
            return try ISO8601Duration(text)
        } catch {
            preconditionFailure("\(text) is a valid duration: \(error)")
        }
    }
}
