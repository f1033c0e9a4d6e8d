/// A catalog as a person writes it (a request body, a file given to the command line): a field it does not know is
/// refused rather than ignored. A misspelt `"entitlement"` would otherwise make a product that unlocks nothing, and
/// every customer who bought it would be denied. What the server stored and sends (`Catalog`'s own decoding) is read
/// leniently, so that a newer server's field does not break an older SDK.
public struct WrittenCatalog: Decodable, Sendable {
    public let catalog: Catalog

    public init(from decoder: any Decoder) throws {
        try UnknownFields.refuse(decoder, Catalog.CodingKeys.self, what: "a catalog")
        let container = try decoder.container(keyedBy: Catalog.CodingKeys.self)
        catalog = try Catalog(decoded: try container.decode([WrittenProduct].self, forKey: .products).map(\.product))
    }

    struct WrittenProduct: Decodable {
        let product: CatalogProduct

        init(from decoder: any Decoder) throws {
            try UnknownFields.refuse(decoder, CatalogProduct.CodingKeys.self, what: "a product")
            product = try CatalogProduct(from: decoder)
        }
    }
}

/// The fields of a JSON object that a type does not know.
public enum UnknownFields {
    /// Any key of a JSON object.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The first field (by name) of the decoder's object that `Keys` does not list; nil when it is not an object.
    public static func first<Keys: CodingKey & CaseIterable>(in decoder: any Decoder, notIn keys: Keys.Type) -> String? {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return nil }
        let known = Set(keys.allCases.map(\.stringValue))
        return container.allKeys.map(\.stringValue).sorted().first { !known.contains($0) }
    }

    /// The first field of the decoder's object that `Keys` does not list, as a `DecodingError` at that field.
    static func refuse<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _ keys: Keys.Type, what: String) throws {
        guard let unknown = first(in: decoder, notIn: keys) else { return }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath + [AnyKey(stringValue: unknown)], debugDescription: "'\(unknown)' is not a field of \(what)")
        )
    }
}
