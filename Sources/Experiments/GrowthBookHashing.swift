/// GrowthBook's cross-SDK bucketing, bit for bit: the same user lands in the same variant here, in GrowthBook's
/// JavaScript SDK and in every other SDK that follows its published test cases (spec version 0.8.0).
public enum GrowthBookHashing {
    static let offsetBasis: UInt32 = 0x811C_9DC5
    static let prime: UInt32 = 16_777_619

    /// 32-bit FNV-1a over the string's UTF-16 code units, as JavaScript's `charCodeAt` sees them.
    public static func fnv1a32(_ text: String) -> UInt32 {
        fnv1a32(continuing: offsetBasis, text)
    }

    /// FNV-1a is a stream: hashing `b` from the state after `a` is hashing `a + b`, with no concatenation.
    @inline(__always)
    static func fnv1a32(continuing state: UInt32, _ text: String) -> UInt32 {
        // ASCII text has the same code units in UTF-8 and UTF-16; read the UTF-8 storage directly when it is ASCII.
        let ascii: UInt32? =
            text.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
                var hash = state
                for byte in bytes {
                    guard byte < 0x80 else { return nil }
                    hash = (hash ^ UInt32(byte)) &* prime
                }
                return hash
            } ?? nil
        if let ascii { return ascii }
        var hash = state
        for unit in text.utf16 {
            hash = (hash ^ UInt32(unit)) &* prime
        }
        return hash
    }

    /// FNV-1a of the decimal digits of `number`, as `String(number)` would spell them.
    @inline(__always)
    static func fnv1a32(decimal number: UInt32) -> UInt32 {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = number
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(rest % 10) + 0x30
                rest /= 10
                count += 1
            } while rest > 0
        }
        var hash = offsetBasis
        withUnsafeBytes(of: &digits) { buffer in
            for index in stride(from: count - 1, through: 0, by: -1) {
                hash = (hash ^ UInt32(buffer[index])) &* prime
            }
        }
        return hash
    }

    /// A number in [0, 1) from a seed and a value. Version 2 (the default) hashes twice and keeps four decimals;
    /// version 1 is the legacy form. Other versions give nil.
    public static func hash(seed: String, value: String, version: Int = 2) -> Double? {
        switch version {
        case 2:
            return hashV2(seedState: fnv1a32(seed), value: value)
        case 1:
            return Double(fnv1a32(continuing: fnv1a32(value), seed) % 1_000) / 1_000
        default:
            return nil
        }
    }

    /// Version 2 from FNV-1a's state after the seed, so that the seed is hashed once per experiment.
    @inline(__always)
    static func hashV2(seedState: UInt32, value: String) -> Double {
        let inner = fnv1a32(continuing: seedState, value)
        return Double(fnv1a32(decimal: inner) % 10_000) / 10_000
    }

    /// `n` equal weights summing to 1; none for `n` ≤ 0.
    public static func equalWeights(_ count: Int) -> [Double] {
        count <= 0 ? [] : Array(repeating: 1 / Double(count), count: count)
    }

    /// Each variant's [start, end) slice of [0, 1). A variant's slice starts at the same place whatever the
    /// coverage, so raising coverage never moves a user who was already in. Weights that do not fit (wrong count,
    /// or a sum outside [0.99, 1.01]) fall back to equal weights; coverage is clamped to [0, 1].
    public static func bucketRanges(count: Int, coverage: Double, weights: [Double]?) -> [ClosedRange<Double>] {
        let coverage = min(max(coverage.isNaN ? 0 : coverage, 0), 1)
        var weights = weights ?? []
        let sum = weights.reduce(0, +)
        if weights.count != count || !(0.99...1.01).contains(sum) {
            weights = equalWeights(count)
        }
        var cumulative = 0.0
        return weights.map { weight in
            let start = cumulative
            cumulative += weight
            return start...(start + coverage * max(weight, 0))
        }
    }

    /// The index of the range that holds `value` (start inclusive, end exclusive), or nil.
    public static func chooseVariation(_ value: Double, ranges: [ClosedRange<Double>]) -> Int? {
        ranges.firstIndex { value >= $0.lowerBound && value < $0.upperBound }
    }

    /// Whether a user falls in a namespace's [start, end) slice: the namespace hashes users with version 1 and the
    /// seed `__<namespace id>`, independently of any experiment.
    public static func inNamespace(userId: String, namespace: Namespace) -> Bool {
        guard let value = hash(seed: "__" + namespace.id, value: userId, version: 1) else { return false }
        return value >= namespace.start && value < namespace.end
    }
}

/// A layer of mutually exclusive experiments: each experiment takes a disjoint [start, end) slice.
public struct Namespace: Codable, Hashable, Sendable {
    public var id: String
    public var start: Double
    public var end: Double

    public init(id: String, start: Double, end: Double) {
        self.id = id
        self.start = start
        self.end = end
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case id, start, end }

    /// An unknown field is refused, as in the rest of a definition.
    public init(from decoder: any Decoder) throws {
        try StrictKeys.refuseUnknown(decoder, CodingKeys.self, what: "a namespace")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        start = try c.decode(Double.self, forKey: .start)
        end = try c.decode(Double.self, forKey: .end)
    }
}
