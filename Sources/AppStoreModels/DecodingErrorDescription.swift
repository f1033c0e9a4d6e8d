import Foundation

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

    /// Where a text that is not JSON stops being JSON, in words: `unexpected text at line 2, column 7`, or `it ends
    /// before the JSON does (line 1, column 8)`; nil when the text is JSON. Lines and columns count from 1, columns
    /// in bytes.
    public static func syntaxError(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            let message = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            let bytes = Array(data)
            func position(_ offset: Int) -> String {
                let clamped = min(max(offset, 0), bytes.count)
                let before = bytes[..<clamped]
                let line = before.filter { $0 == 0x0A }.count + 1
                let column = clamped - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
                return "line \(line), column \(column)"
            }
            if let range = message.range(of: "character "), let offset = Int(message[range.upperBound...].prefix { $0.isNumber }) {
                return "unexpected text at \(position(offset))"
            }
            if message.lowercased().contains("end of file") || message.lowercased().contains("unexpected end") {
                return "it ends before the JSON does (\(position(bytes.count)))"
            }
            return message
        }
    }

    private static func text(of path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
