import Entitlements
import StorekeeperCore

/// What the request bodies' decoders share: an unknown field, or null where the document allows no null, is refused
/// with the field's name rather than ignored (a misspelt field would look like success, and `decodeIfPresent` reads
/// null as absent, so a change would silently keep the old value).
enum StrictBody {
    /// Refuses the first field of the decoder's object (by name) that `Keys` does not list.
    static func refuseUnknown<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, _ keys: Keys.Type, what: String) throws {
        try refuse(UnknownFields.first(in: decoder, notIn: keys), path: "", what: what)
    }

    /// Refuses the first unknown field of the object at `key`, if it is an object (its own decoding says what else
    /// is wrong with it).
    static func refuseUnknown<Key: CodingKey, Keys: CodingKey & CaseIterable>(
        in container: KeyedDecodingContainer<Key>, at key: Key, _ keys: Keys.Type, what: String
    ) throws {
        guard container.contains(key), let nested = try? container.superDecoder(forKey: key) else { return }
        try refuse(UnknownFields.first(in: nested, notIn: keys), path: key.stringValue + ".", what: what)
    }

    /// Refuses the first null (by name) among the decoder object's fields but `allowed`: for bodies whose types decode
    /// an optional field's null as absent, where the document allows no null.
    static func refuseNulls(in decoder: any Decoder, except allowed: Set<String>, path: String = "") throws {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return }
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !allowed.contains(key.stringValue) {
            if (try? container.decodeNil(forKey: key)) == true {
                throw CoreError.invalidInput(field: path + key.stringValue, "null is not allowed here: leave the field out instead")
            }
        }
    }

    /// Any key of a JSON object.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static func refuse(_ unknown: String?, path: String, what: String) throws {
        if let unknown { throw CoreError.invalidInput(field: path + unknown, "'\(unknown)' is not a field of \(what)") }
    }
}

extension KeyedDecodingContainer {
    /// A field that may be absent but is not null when present (null is a `valueNotFound` that names the field).
    func decodeUnlessAbsent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        contains(key) ? try decode(type, forKey: key) : nil
    }
}
