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
        case .unknownMetric(let name): "unknown metric '\(name)'"
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
        case .unknownMetric(let name): "unknown metric '\(name)'"
        case .invalidRates(let line, let why): "line \(line): \(why)"
        }
    }
}
