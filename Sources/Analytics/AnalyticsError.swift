/// Why an analytics request or input was refused. Knows nothing of HTTP: the server maps every case to 400.
public enum AnalyticsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A parameter or field that cannot be used, named, with why.
    case invalidParameter(String, String)
    /// A metric that does not exist.
    case unknownMetric(String)
    /// An exchange-rate file that cannot be read: its line (1-based) and why.
    case invalidRates(line: Int, String)

    public var description: String {
        switch self {
        case .invalidParameter(let name, let why): "\(name): \(why)"
        case .unknownMetric(let name): Self.unknown(name)
        case .invalidRates(let line, let why): "rates, line \(line): \(why)"
        }
    }
}

extension AnalyticsError {
    /// The parameter or input at fault.
    public var field: String {
        switch self {
        case .invalidParameter(let name, _): name
        case .unknownMetric: "metric"
        case .invalidRates: "rates"
        }
    }

    /// Why, without the field's name.
    public var reason: String {
        switch self {
        case .invalidParameter(_, let why): why
        case .unknownMetric(let name): Self.unknown(name)
        case .invalidRates(let line, let why): "line \(line): \(why)"
        }
    }
}

extension AnalyticsError {
    /// `unknown metric 'mmr': did you mean 'mrr'?`, the nearest name by edit distance when one is close (at most a
    /// third of the name's letters apart), else the list of names.
    static func unknown(_ name: String) -> String {
        let names = Metric.allCases.map(\.rawValue)
        let scored = names.map { (name: $0, distance: editDistance(name.lowercased(), $0.lowercased())) }
        if let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= max(1, name.count / 3) {
            return "unknown metric '\(name)': did you mean '\(best.name)'?"
        }
        return "unknown metric '\(name)': one of \(names.joined(separator: ", "))"
    }

    /// Levenshtein's distance, with a transposition counting once (`mmr` → `mrr` is one).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1) }
            }
        }
        return rows[a.count][b.count]
    }
}
