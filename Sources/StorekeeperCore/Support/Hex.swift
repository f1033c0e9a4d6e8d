/// Lower-case hexadecimal, without Foundation's `String(format:)` (slow on Linux, and on the request path here).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `bytes` bytes from the system's secure random source, as hex.
    public static func random(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
