import Foundation

/// The error file of an import: one line per customer not imported and per line of the file left out.
public enum ImportProblemCSV {
    public static let header = "line,app_user_id,transaction_ids,outcome,reason"

    public static func text(_ problems: [ImportProblem]) -> String {
        var csv = header + "\n"
        for p in problems {
            csv +=
                [String(p.line), p.appUserId, p.transactionIds.joined(separator: " "), p.outcome, p.reason].map(CSVCell.text)
                .joined(separator: ",") + "\n"
        }
        return csv
    }
}
