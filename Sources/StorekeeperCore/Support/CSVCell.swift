/// A text cell of every CSV the product writes (an import's problems, `storekeeper export`), safe to open in a
/// spreadsheet:
/// - a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return, which a spreadsheet would run as a
///   formula, begins with `'` instead (OWASP's advice for CSV injection), and is quoted;
/// - a cell holding a comma, a quote or a line break is quoted, its quotes doubled (RFC 4180).
/// Both are decided by Unicode scalar: a comma or quote joined to a combining mark is one `Character` that is neither,
/// yet a CSV reader splits on its first scalar.
public enum CSVCell {
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]
    static let needsQuotes: Set<Unicode.Scalar> = [",", "\"", "\n", "\r"]

    public static func text(_ value: String) -> String {
        let neutralised = value.unicodeScalars.first.map(formulaStarts.contains) == true
        let cell = neutralised ? "'" + value : value
        guard neutralised || cell.unicodeScalars.contains(where: needsQuotes.contains) else { return cell }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in cell.unicodeScalars {
            quoted.append(scalar)
            if scalar == "\"" { quoted.append("\"") }
        }
        quoted.append("\"")
        return String(quoted)
    }
}
