import Foundation

/// The header fields a StoreKit JWS carries.
struct JWSHeader: Decodable, Sendable {
    var alg: String?
    var x5c: [String]?
    var kid: String?
    var typ: String?
}

/// A JWS header as the verifier uses it: the algorithm, and the `x5c` certificates already decoded from base64
/// (nil where an entry is not standard base64).
struct DecodedHeader: Sendable {
    var alg: String?
    var x5c: [[UInt8]?]?

    init(segment: ArraySlice<UInt8>, decoder: JSONDecoder) throws(VerificationError) {
        guard let bytes = Base64.decode(segment, alphabet: .url) else {
            throw .format("the JWS header is not base64url")
        }
        let header: JWSHeader
        do {
            header = try decoder.decode(JWSHeader.self, from: Data(bytes))
        } catch {
            throw .format("the JWS header is not a JSON object of the expected fields")
        }
        alg = header.alg
        x5c = header.x5c?.map { entry in Base64.decode(entry, alphabet: .standard).flatMap { $0.isEmpty ? nil : $0 } }
    }
}

/// A compact-serialised JWS split into its parts, nothing verified yet.
struct CompactJWS: Sendable {
    /// `BASE64URL(header)`, decoded separately (and memoised: Apple's header is the same for every JWS of a leaf).
    var headerSegment: ArraySlice<UInt8>
    /// The decoded payload bytes (JSON).
    var payload: Data
    /// The raw `r || s` signature.
    var signature: [UInt8]
    /// `BASE64URL(header) '.' BASE64URL(payload)`, the bytes the signature covers.
    var signingInput: ArraySlice<UInt8>

    /// Splits `bytes` and decodes payload and signature. Every malformation is an `invalidJWTFormat`.
    init(_ bytes: [UInt8], maxBytes: Int) throws(VerificationError) {
        guard bytes.count <= maxBytes else {
            throw .format("the JWS is \(bytes.count) bytes, over the limit of \(maxBytes)")
        }
        guard let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(secondDot + 1)...].contains(UInt8(ascii: "."))
        else {
            throw .format("a compact JWS has exactly three dot-separated segments")
        }
        let headerPart = bytes[..<firstDot]
        let payloadPart = bytes[(firstDot + 1)..<secondDot]
        let signaturePart = bytes[(secondDot + 1)...]
        guard !headerPart.isEmpty, !payloadPart.isEmpty, !signaturePart.isEmpty else {
            throw .format("a JWS segment is empty")
        }
        guard let payload = Base64.decode(payloadPart, alphabet: .url) else {
            throw .format("the JWS payload is not base64url")
        }
        guard let signature = Base64.decode(signaturePart, alphabet: .url) else {
            throw .format("the JWS signature is not base64url")
        }
        self.headerSegment = headerPart
        self.payload = Data(payload)
        self.signature = signature
        self.signingInput = bytes[..<secondDot]
    }
}
