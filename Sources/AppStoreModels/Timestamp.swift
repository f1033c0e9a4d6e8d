import Foundation

/// An instant as Apple sends it: milliseconds since the Unix epoch.
///
/// Xcode's StoreKit Testing sends fractional milliseconds; they are rounded to the nearest millisecond, so every
/// instant fits the `BIGINT` columns and compares exactly.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public init(_ date: Date) {
        self.millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    public var description: String { "\(millisecondsSince1970)" }

    /// The largest magnitude accepted: year ±285,000 or so, far beyond any real date, and exactly representable.
    static let limit: Double = 9_000_000_000_000_000

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let whole = try? container.decode(Int64.self) {
            self.millisecondsSince1970 = whole
            return
        }
        let value = try container.decode(Double.self)
        guard value.isFinite, abs(value) < Self.limit else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(value) is not a valid epoch-milliseconds instant")
        }
        self.millisecondsSince1970 = Int64(value.rounded())
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(millisecondsSince1970)
    }
}
