/// Decoding helpers for the models on the verification hot path.
///
/// They read instants and enumerations as JSON primitives straight from the keyed container. Decoding them through
/// their own `Decodable` conformances costs a nested decoder and a coding-path node per field, which made up half
/// of a transaction's decoding time; the results are the same.
extension KeyedDecodingContainer {
    package func timestamp(_ key: Key) throws -> Timestamp? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard value.isFinite, abs(value) < Timestamp.limit else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\(value) is not a valid epoch-milliseconds instant")
        }
        return Timestamp(millisecondsSince1970: Int64(value.rounded()))
    }

    package func apple<E: AppleEnum>(_ key: Key) throws -> E? where E.RawValue == String {
        try decodeIfPresent(String.self, forKey: key).map(E.init(rawValue:))
    }

    package func apple<E: AppleEnum>(_ key: Key) throws -> E? where E.RawValue == Int32 {
        try decodeIfPresent(Int32.self, forKey: key).map(E.init(rawValue:))
    }
}
