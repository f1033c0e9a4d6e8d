/// A short, readable account of why JSON did not decode: which field, and what was wrong with it.
public enum DecodingErrorDescription {
    /// `'data.signedDate' is not a Int64`, `'notificationUUID' is missing`, `not valid JSON`, or the message a
    /// decoder gave (a validation that failed). Errors that are not `DecodingError`s are described as they are.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String { text(of: context.codingPath) }
        switch error {
        case .typeMismatch(let type, let context):
            return "'\(path(context))' is not a \(type)"
        case .valueNotFound(let type, let context):
            return "'\(path(context))' is null where a \(type) is expected"
        case .keyNotFound(let key, let context):
            return context.codingPath.isEmpty ? "'\(key.stringValue)' is missing" : "'\(path(context)).\(key.stringValue)' is missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                // The parser's own error carries the syntax error beneath; a decoder's validation carries none.
                return context.underlyingError != nil ? "not valid JSON" : context.debugDescription
            }
            return "'\(path(context))': \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The path of the value at fault (`data.signedDate`, `products.[2].id`; a missing key included), or nil when
    /// the error names none (the document itself, or an error that is not a `DecodingError`).
    public static func field(of error: any Error) -> String? {
        guard let error = error as? DecodingError else { return nil }
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        @unknown default: return nil
        }
        return path.isEmpty ? nil : text(of: path)
    }

    private static func text(of path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
