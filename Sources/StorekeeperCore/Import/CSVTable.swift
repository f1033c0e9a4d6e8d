import Foundation

/// A CSV file as rows of cells (RFC 4180: quoted cells may hold commas, quotes doubled, and line breaks), with the
/// line each row starts on. A byte-order mark is skipped; `\r\n` and `\n` both end a row; empty rows are left out.
struct CSVTable {
    struct Row {
        var line: Int
        var cells: [String]
    }

    var header: [String]
    var rows: [Row]

    /// Header names compared loosely: lower case, with spaces and dashes as underscores (`App User ID` is
    /// `app_user_id`).
    static func normalized(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: " ", with: "_")
            .replacingOccurrences(of: "-", with: "_")
    }

    /// The column of the first of `names` the header has (compared normalized).
    func column(_ names: String...) -> Int? {
        let normalized = header.map(Self.normalized)
        for name in names { if let index = normalized.firstIndex(of: name) { return index } }
        return nil
    }

    static func parse(_ text: String) throws(CoreError) -> CSVTable {
        var rows: [Row] = []
        var cells: [String] = []
        var cell = ""
        var quoted = false
        var line = 1
        var rowLine = 1
        var afterQuote = false
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        func endRow() {
            cells.append(cell)
            if !(cells.count == 1 && cells[0].isEmpty) { rows.append(Row(line: rowLine, cells: cells)) }
            cells = []
            cell = ""
        }
        var iterator = scalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        while let scalar = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if scalar == "\"" {
                    let next = iterator.next()
                    if next == "\"" {
                        cell.unicodeScalars.append("\"")
                    } else {
                        quoted = false
                        afterQuote = true
                        pending = next
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    cell.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard cell.isEmpty, !afterQuote else {
                    throw .invalidInput(field: "file", "line \(line): a quote inside an unquoted cell")
                }
                quoted = true
            case ",":
                cells.append(cell)
                cell = ""
                afterQuote = false
            case "\r":
                continue
            case "\n":
                endRow()
                afterQuote = false
                line += 1
                rowLine = line
            default:
                guard !afterQuote else { throw .invalidInput(field: "file", "line \(line): text after a quoted cell") }
                cell.unicodeScalars.append(scalar)
            }
        }
        if quoted { throw .invalidInput(field: "file", "line \(rowLine): a quoted cell is never closed") }
        if !cell.isEmpty || !cells.isEmpty || afterQuote { endRow() }
        guard let first = rows.first else { throw .invalidInput(field: "file", "the file is empty") }
        return CSVTable(header: first.cells, rows: Array(rows.dropFirst()))
    }
}
