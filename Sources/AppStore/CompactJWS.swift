import Foundation

/// The header fields a StoreKit JWS carries.
struct JWSHeader: Decodable, Sendable {
    var alg: String?
    var x5c: [String]?
    var kid: String?
    var typ: String?
}

/// A compact-serialised JWS split into its parts, nothing verified yet.
struct CompactJWS: Sendable {
    var header: JWSHeader
    /// The decoded payload bytes (JSON).
    var payload: [UInt8]
    /// The raw `r || s` signature.
    var signature: [UInt8]
    /// `BASE64URL(header) '.' BASE64URL(payload)`, the bytes the signature covers.
    var signingInput: ArraySlice<UInt8>

    /// Splits and decodes `bytes`. Every malformation is an `invalidJWTFormat`.
    init(_ bytes: [UInt8], maxBytes: Int, decoder: JSONDecoder) throws(VerificationError) {
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
        guard let headerBytes = Base64.decode(headerPart, alphabet: .url) else {
            throw .format("the JWS header is not base64url")
        }
        guard let payload = Base64.decode(payloadPart, alphabet: .url) else {
            throw .format("the JWS payload is not base64url")
        }
        guard let signature = Base64.decode(signaturePart, alphabet: .url) else {
            throw .format("the JWS signature is not base64url")
        }
        do {
            self.header = try decoder.decode(JWSHeader.self, from: Data(headerBytes))
        } catch {
            throw .format("the JWS header is not a JSON object of the expected fields")
        }
        self.payload = payload
        self.signature = signature
        self.signingInput = bytes[..<secondDot]
    }
}
