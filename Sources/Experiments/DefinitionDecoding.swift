import Foundation

/// Refuses a JSON object's unknown keys, naming the first one, when the decoder asks for it
/// (``ExperimentDefinition/decode(_:requireWeightsSumToOne:)`` does: a definition someone wrote, where a misspelt
/// `weigths` must not pass as equal weights). Plain decoding ignores them: the SDK in an app reads definitions a newer
/// server may have written with fields it does not know, and must still assign from them.
enum StrictKeys {
    /// The decoder's `userInfo` key that turns the refusal on. (Its initializer is failable in signature only: it
    /// takes any string.)
    static let option = CodingUserInfoKey(rawValue: "storekeeper.experiments.refuseUnknownKeys")

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Refuses the first key that is neither one of `keys` nor one of `ignoring` (fields a reader passes over).
    static func refuseUnknown<Keys: CodingKey & CaseIterable>(
        _ decoder: any Decoder, _ keys: Keys.Type, what: String, ignoring: Set<String> = []
    ) throws {
        guard let option, decoder.userInfo[option] as? Bool == true else { return }
        let known = Set(Keys.allCases.map(\.stringValue)).union(ignoring)
        let container = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [AnyKey(stringValue: unknown)],
                    debugDescription: "'\(unknown)' is not a field of \(what) (known: \(known.sorted().joined(separator: ", ")))"))
        }
    }
}

extension KeyedDecodingContainer {
    /// A whole number given as any JSON number (`2`, `2.0`), refused with its field's path when it is not whole: Linux's
    /// Foundation reports `1.5` for an `Int` as invalid JSON, without the field.
    func decodeWholeIfPresent(_ key: Key) throws -> Int64? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard value.rounded() == value, abs(value) < 9.0e15 else {
            throw DecodingError.typeMismatch(Int.self, .init(codingPath: codingPath + [key], debugDescription: "\(value) is not whole"))
        }
        return Int64(value)
    }
}

/// Swift's `DecodingError` said in plain words, with the path of the field at fault (`variants[1].weight`).
public enum PlainDecodingError {
    public static func experimentError(_ error: any Error) -> ExperimentError {
        guard let error = error as? DecodingError else { return .invalidDefinition("not valid JSON") }
        switch error {
        case .typeMismatch(let type, let context):
            return field(context.codingPath, "must be \(words(for: type))")
        case .valueNotFound(let type, let context):
            return field(context.codingPath, "is null; it must be \(words(for: type))")
        case .keyNotFound(let key, let context):
            return field(context.codingPath + [key], "is required")
        case .dataCorrupted(let context):
            // Foundation reports a syntax error (and, on Linux, a number that does not fit its type) without a path.
            guard !context.codingPath.isEmpty else { return .invalidDefinition("not valid JSON") }
            // An enum's unknown value: Swift says "Cannot initialize Status from invalid String value bogus".
            var message = context.debugDescription
            if message.hasPrefix("Cannot initialize"), let range = message.range(of: "value ", options: .backwards) {
                message = "'\(message[range.upperBound...])' is not one of the allowed values"
            }
            return .invalidField(path(context.codingPath), message)
        @unknown default:
            return .invalidDefinition("not a valid definition")
        }
    }

    private static func field(_ codingPath: [any CodingKey], _ message: String) -> ExperimentError {
        codingPath.isEmpty ? .invalidDefinition("the definition \(message)") : .invalidField(path(codingPath), message)
    }

    /// `variants[1].weight`.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    static func words(for type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "a whole number"
        case is Double.Type: "a number"
        case is [Any].Type: "a list"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}
