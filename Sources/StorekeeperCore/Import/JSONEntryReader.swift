/// Splits JSON answers as their bytes come, without decoding them: a file that is one array gives each of its
/// elements (numbered from 1), any other file each non-blank line (numbered by line). Holds one entry at a time: an
/// entry longer than `maxEntryBytes` is refused, so a hostile file cannot make it hold more.
struct JSONEntryReader {
    struct Entry {
        var line: Int
        var bytes: [UInt8]
    }

    static let maxEntryBytes = 1 << 20

    private enum Mode { case start, array, lines, arrayClosed }
    private var mode = Mode.start
    private var line = 1
    private var entry: [UInt8] = []
    // In an array: the nesting inside the current element, and whether in a string (after a backslash).
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var elements = 0

    private static let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    private static let bom: Set<UInt8> = [0xEF, 0xBB, 0xBF]

    mutating func feed(_ bytes: some Sequence<UInt8>) throws(CoreError) -> [Entry] {
        var entries: [Entry] = []
        for byte in bytes { try take(byte, into: &entries) }
        return entries
    }

    mutating func finish() throws(CoreError) -> [Entry] {
        switch mode {
        case .start, .arrayClosed: return []
        case .array: throw .invalidInput(field: "file", "line \(elements + 1): the JSON array is never closed")
        case .lines:
            defer { entry = [] }
            return Self.isBlank(entry) ? [] : [Entry(line: line, bytes: Self.trimmed(entry))]
        }
    }

    private mutating func take(_ byte: UInt8, into entries: inout [Entry]) throws(CoreError) {
        switch mode {
        case .start:
            if byte == 0x0A { line += 1 }
            if Self.space.contains(byte) || Self.bom.contains(byte) { return }
            if byte == UInt8(ascii: "[") {
                mode = .array
            } else {
                mode = .lines
                try take(byte, into: &entries)
            }
        case .lines:
            if byte == 0x0A {
                if !Self.isBlank(entry) { entries.append(Entry(line: line, bytes: Self.trimmed(entry))) }
                entry.removeAll(keepingCapacity: true)
                line += 1
                return
            }
            try append(byte)
        case .array:
            if entry.isEmpty {
                if Self.space.contains(byte) || byte == UInt8(ascii: ",") { return }
                if byte == UInt8(ascii: "]") {
                    mode = .arrayClosed
                    return
                }
            }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                try append(byte)
                return
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth < 0 {
                    // The array's own end after a scalar element.
                    depth = 0
                    emitElement(into: &entries)
                    mode = .arrayClosed
                    return
                }
            case UInt8(ascii: ",") where depth == 0:
                emitElement(into: &entries)
                return
            default: break
            }
            try append(byte)
            if depth == 0, byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { emitElement(into: &entries) }
        case .arrayClosed:
            guard Self.space.contains(byte) else {
                throw .invalidInput(field: "file", "line \(elements): text after the JSON array's end")
            }
        }
    }

    private mutating func append(_ byte: UInt8) throws(CoreError) {
        entry.append(byte)
        guard entry.count <= Self.maxEntryBytes else {
            let at = mode == .array ? elements + 1 : line
            throw .invalidInput(field: "file", "line \(at): an entry over \(Self.maxEntryBytes >> 20) MB")
        }
    }

    private mutating func emitElement(into entries: inout [Entry]) {
        guard !entry.isEmpty else { return }
        elements += 1
        entries.append(Entry(line: elements, bytes: Self.trimmed(entry)))
        entry.removeAll(keepingCapacity: true)
    }

    private static func isBlank(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { space.contains($0) } }

    private static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.drop { space.contains($0) || bom.contains($0) })
    }
}
