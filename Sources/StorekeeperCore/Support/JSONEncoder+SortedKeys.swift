import Foundation

extension JSONEncoder {
    /// Sorted keys: equal values encode to equal bytes (ETags, event payloads, tests). One shared encoder: encoding
    /// does not change it, and building one per state or event was a measurable cost on the ingest path.
    public static let sortedKeys: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
