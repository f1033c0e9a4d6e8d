import Foundation

/// verifyReceipt's JSON writes numbers, booleans and `_ms` instants as strings (`"quantity": "1"`,
/// `"is_trial_period": "false"`). These helpers read either form and write Apple's.
extension KeyedDecodingContainer {
    package func appleString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) { return text.isEmpty ? nil : text }
        if let number = try? decode(Int64.self, forKey: key) { return String(number) }
        if let flag = try? decode(Bool.self, forKey: key) { return flag ? "true" : "false" }
        if let number = try? decode(Double.self, forKey: key) { return String(number) }
        throw DecodingError.typeMismatch(
            String.self, .init(codingPath: codingPath + [key], debugDescription: "expected a string, number or boolean"))
    }

    package func appleInt(_ key: Key) throws -> Int64? {
        guard let text = try appleString(key) else { return nil }
        guard let value = Int64(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "'\(text)' is not an integer")
        }
        return value
    }

    package func appleBool(_ key: Key) throws -> Bool? {
        switch try appleString(key) {
        case nil: return nil
        case "true", "1": return true
        case "false", "0": return false
        case let text?:
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "'\(text)' is not a boolean")
        }
    }

    package func appleMilliseconds(_ key: Key) throws -> Timestamp? {
        try appleInt(key).map(Timestamp.init(millisecondsSince1970:))
    }
}

extension KeyedEncodingContainer {
    package mutating func encodeAppleString(_ value: (some CustomStringConvertible)?, forKey key: Key) throws {
        if let value { try encode(value.description, forKey: key) }
    }

    package mutating func encodeAppleMilliseconds(_ value: Timestamp?, forKey key: Key) throws {
        if let value { try encode(String(value.millisecondsSince1970), forKey: key) }
    }
}
