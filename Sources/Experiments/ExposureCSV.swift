import Foundation

/// Reads `user_id,variant,exposed_at,trial,paid,revenue` (one row per exposed user), with errors that name the line.
public enum ExposureCSV {
    public static let header = "user_id,variant,exposed_at,trial,paid,revenue"

    public static func parse(_ text: String, experiment: ExperimentDefinition) throws(ExperimentError) -> [ExposedUser] {
        var users: [ExposedUser] = []
        var seen: Set<String> = []
        let variants = Set(experiment.variants.map(\.key))
        var lineNumber = 0
        var sawHeader = false
        var lastLine = 1
        // "\r\n" is one Character in Swift, so both line ends are separators.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            lastLine = lineNumber
            guard sawHeader else {
                guard line.replacingOccurrences(of: " ", with: "") == header else {
                    throw .invalidData(line: lineNumber, "the header must be '\(header)'")
                }
                sawHeader = true
                continue
            }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 6 else { throw .invalidData(line: lineNumber, "expected 6 fields, found \(fields.count)") }
            let user = fields[0]
            let variant = fields[1]
            guard !user.isEmpty else { throw .invalidData(line: lineNumber, "user_id is empty") }
            guard seen.insert(user).inserted else { throw .invalidData(line: lineNumber, "user '\(user)' appears twice") }
            guard variants.contains(variant) else {
                throw .invalidData(
                    line: lineNumber,
                    "unknown variant '\(variant)' (the experiment has \(experiment.variants.map(\.key).joined(separator: ", ")))")
            }
            guard let exposedAt = Int64(fields[2]) else {
                throw .invalidData(line: lineNumber, "exposed_at '\(fields[2])' is not epoch milliseconds")
            }
            let trial = try flag(fields[3], "trial", lineNumber)
            let paid = try flag(fields[4], "paid", lineNumber)
            guard let revenue = Double(fields[5]), revenue.isFinite else {
                throw .invalidData(line: lineNumber, "revenue '\(fields[5])' is not a number")
            }
            if revenue < 0, !paid {
                throw .invalidData(line: lineNumber, "negative revenue \(fields[5]) without a payment is not a refund")
            }
            if revenue > 0, !paid {
                throw .invalidData(line: lineNumber, "revenue \(fields[5]) from a user who did not pay")
            }
            users.append(
                ExposedUser(userId: user, variant: variant, exposedAt: exposedAt, startedTrial: trial, paid: paid, revenue: revenue))
        }
        guard sawHeader else { throw .invalidData(line: 1, "the file is empty; expected the header '\(header)'") }
        guard !users.isEmpty else { throw .invalidData(line: lastLine, "there are no exposed users") }
        return users
    }

    private static func flag(_ text: String, _ name: String, _ line: Int) throws(ExperimentError) -> Bool {
        switch text.lowercased() {
        case "1", "true": return true
        case "0", "false", "": return false
        default: throw .invalidData(line: line, "\(name) '\(text)' is not 0 or 1")
        }
    }
}
