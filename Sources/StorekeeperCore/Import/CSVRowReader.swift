import Foundation

/// CSV read as its bytes come (RFC 4180: quoted cells may hold commas, doubled quotes and line breaks), each row with
/// the line it starts on. A byte-order mark is skipped; `\r\n` and `\n` both end a row; empty rows are left out. Holds
/// one row at a time: a row longer than `maxRowBytes` is refused, so a hostile file cannot make it hold more.
struct CSVRowReader {
    struct Row {
        var line: Int
        var cells: [String]
    }

    static let maxRowBytes = 1 << 20

    private var cells: [String] = []
    private var cell: [UInt8] = []
    private var rowBytes = 0
    private var quoted = false
    /// A quote just closed a quoted cell, or (inside one) a quote may be the first of a doubled pair.
    private var afterQuote = false
    private var quoteInQuoted = false
    private var line = 1
    private var rowLine = 1
    private var started = false
    private var bom: [UInt8] = []
    private(set) var sawRow = false

    /// The rows the bytes complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(CoreError) -> [Row] {
        var rows: [Row] = []
        for byte in bytes { try take(byte, into: &rows) }
        return rows
    }

    /// The last row, if the file does not end with a line break.
    mutating func finish() throws(CoreError) -> [Row] {
        var rows: [Row] = []
        if !started { flushBOM(into: &rows) }
        if quoteInQuoted {
            quoteInQuoted = false
            quoted = false
            afterQuote = true
        }
        if quoted { throw .invalidInput(field: "file", "line \(rowLine): a quoted cell is never closed") }
        if !cell.isEmpty || !cells.isEmpty || afterQuote { endRow(into: &rows) }
        return rows
    }

    private mutating func take(_ byte: UInt8, into rows: inout [Row]) throws(CoreError) {
        if !started {
            // The byte-order mark EF BB BF, if the file starts with it.
            let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
            if byte == mark[bom.count] {
                bom.append(byte)
                if bom.count == mark.count {
                    started = true
                    bom = []
                }
                return
            }
            started = true
            let held = bom
            bom = []
            for earlier in held { try take(earlier, into: &rows) }
        }
        rowBytes += 1
        guard rowBytes <= Self.maxRowBytes else {
            throw .invalidInput(field: "file", "line \(rowLine): a row over \(Self.maxRowBytes >> 20) MB")
        }
        if quoted {
            if quoteInQuoted {
                quoteInQuoted = false
                if byte == UInt8(ascii: "\"") {
                    cell.append(byte)
                    return
                }
                quoted = false
                afterQuote = true
            } else {
                if byte == UInt8(ascii: "\"") {
                    quoteInQuoted = true
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    cell.append(byte)
                }
                return
            }
        }
        switch byte {
        case UInt8(ascii: "\""):
            guard cell.isEmpty, !afterQuote else { throw .invalidInput(field: "file", "line \(line): a quote inside an unquoted cell") }
            quoted = true
        case UInt8(ascii: ","):
            cells.append(String(decoding: cell, as: UTF8.self))
            cell.removeAll(keepingCapacity: true)
            afterQuote = false
        case UInt8(ascii: "\r"):
            return
        case UInt8(ascii: "\n"):
            endRow(into: &rows)
            afterQuote = false
            line += 1
            rowLine = line
        default:
            guard !afterQuote else { throw .invalidInput(field: "file", "line \(line): text after a quoted cell") }
            cell.append(byte)
        }
    }

    private mutating func flushBOM(into rows: inout [Row]) {
        // A file of fewer bytes than the mark, each of them the mark's: cells, not a mark.
        started = true
        let held = bom
        bom = []
        for byte in held { try? take(byte, into: &rows) }
    }

    private mutating func endRow(into rows: inout [Row]) {
        cells.append(String(decoding: cell, as: UTF8.self))
        if !(cells.count == 1 && cells[0].isEmpty) {
            rows.append(Row(line: rowLine, cells: cells))
            sawRow = true
        }
        cells = []
        cell.removeAll(keepingCapacity: true)
        rowBytes = 0
    }
}

/// A CSV file's header: its columns found by name, compared loosely.
struct CSVHeader {
    var names: [String]
    private let normalizedNames: [String]

    init(_ names: [String]) {
        self.names = names
        normalizedNames = names.map(Self.normalized)
    }

    /// Header names compared loosely: lower case, with spaces and dashes as underscores (`App User ID` is
    /// `app_user_id`).
    static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: " ", with: "_")
            .replacingOccurrences(of: "-", with: "_")
    }

    /// The column of the first of `names` the header has (compared normalized).
    func column(_ names: String...) -> Int? {
        for name in names { if let index = normalizedNames.firstIndex(of: name) { return index } }
        return nil
    }
}
