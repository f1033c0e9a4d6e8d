/// A value of one of Apple's enumerations that keeps its raw value.
///
/// Apple adds notification types, subtypes and offer types over time. A value that this library does not know yet
/// still decodes, is kept as it came, and encodes back unchanged; `isKnown` tells whether it is one of the documented
/// values. Compare against the static members (`.subscribed`, `.introductoryOffer` …) as with an enum.
public protocol AppleEnum: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue: Codable & Hashable & Sendable {
    init(rawValue: RawValue)
    /// The values Apple documents.
    static var known: [Self] { get }
}

extension AppleEnum {
    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { "\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(rawValue: try container.decode(RawValue.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
