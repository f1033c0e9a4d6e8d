import Foundation

/// Strict base64 decoding for the two alphabets a JWS uses: base64url without padding for its segments
/// (RFC 7515 §2) and standard base64 with padding for the DER certificates in `x5c` (RFC 7515 §4.1.6).
enum Base64 {
    enum Alphabet {
        case standard
        case url
    }

    private static let invalid: UInt8 = 0xFF

    private static let standardTable: [UInt8] = table(extra62: UInt8(ascii: "+"), extra63: UInt8(ascii: "/"))
    private static let urlTable: [UInt8] = table(extra62: UInt8(ascii: "-"), extra63: UInt8(ascii: "_"))

    private static func table(extra62: UInt8, extra63: UInt8) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(char)] = UInt8(index)
        }
        table[Int(extra62)] = 62
        table[Int(extra63)] = 63
        return table
    }

    /// Decodes `input`, or returns nil if it holds a character outside the alphabet, padding where the alphabet
    /// takes none (or none where it needs it), or a length no encoder produces.
    static func decode(_ input: String, alphabet: Alphabet) -> [UInt8]? {
        var input = input
        return input.withUTF8 { decode($0, alphabet: alphabet) }
    }

    static func decode(_ input: ArraySlice<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0, alphabet: alphabet) }
    }

    static func decode(_ input: [UInt8], alphabet: Alphabet) -> [UInt8]? {
        input.withUnsafeBufferPointer { decode($0, alphabet: alphabet) }
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>, alphabet: Alphabet) -> [UInt8]? {
        var count = input.count
        switch alphabet {
        case .url:
            if count % 4 == 1 { return nil }
        case .standard:
            guard count % 4 == 0 else { return nil }
            // Up to two '=' at the end.
            if count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
            if count > 0, input[count - 1] == UInt8(ascii: "="), count % 4 == 3 { count -= 1 }
        }
        let table = alphabet == .url ? urlTable : standardTable
        return table.withUnsafeBufferPointer { table -> [UInt8]? in
            var failed = false
            let output = [UInt8](unsafeUninitializedCapacity: count * 3 / 4 + 3) { buffer, written in
                var accumulator: UInt32 = 0
                var bits: UInt32 = 0
                var out = 0
                for index in 0..<count {
                    let value = table[Int(input[index])]
                    if value == invalid {
                        failed = true
                        break
                    }
                    accumulator = (accumulator << 6) | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        buffer[out] = UInt8(truncatingIfNeeded: accumulator >> bits)
                        out += 1
                    }
                }
                // Leftover bits must be zero padding of fewer than 8 bits, as every encoder writes them.
                if bits >= 6 || accumulator & ((1 << bits) - 1) != 0 { failed = true }
                written = out
            }
            return failed ? nil : output
        }
    }

    /// Base64url without padding (RFC 7515 §2).
    static func encodeURL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }
}
