/// The metrics, by the name the API and `docs/metrics.md` give them.
public enum Metric: String, CaseIterable, Codable, Hashable, Sendable {
    case mrr, arr, activeSubscriptions, activeTrials, newTrials, newPaidSubscriptions, trialConversion, churn, revenue
    case refundRate, freeTrials, retention, ltv, billing, refundRequests

    public init(named name: String) throws(AnalyticsError) {
        guard let metric = Metric(rawValue: name) else { throw .unknownMetric(name) }
        self = metric
    }

    /// One line on what it measures; `docs/metrics.md` gives the formula.
    /// The metric's name in words, as the dashboard titles its page.
    public var title: String {
        switch self {
        case .mrr: "MRR"
        case .arr: "ARR"
        case .activeSubscriptions: "Active subscriptions"
        case .activeTrials: "Active trials"
        case .newTrials: "New trials"
        case .newPaidSubscriptions: "New paid subscriptions"
        case .trialConversion: "Trial conversion"
        case .churn: "Churn"
        case .revenue: "Revenue"
        case .refundRate: "Refund rate"
        case .freeTrials: "Free trials"
        case .retention: "Retention"
        case .ltv: "Lifetime value"
        case .billing: "Billing issues"
        case .refundRequests: "Refund requests"
        }
    }

    public var summary: String {
        switch self {
        case .mrr: "Monthly recurring revenue at the end of each interval: paid, unexpired subscriptions' prices per month (USD)."
        case .arr: "Annual run rate: MRR × 12."
        case .activeSubscriptions: "Paid, unexpired subscriptions (grace period included) at the end of each interval."
        case .activeTrials: "Free trials running at the end of each interval."
        case .newTrials: "Free trials started in each interval."
        case .newPaidSubscriptions: "Subscriptions that began paying in each interval: new, converted from a trial, resubscribed."
        case .trialConversion: "Trials started in each interval: converted, pending and abandoned."
        case .churn: "Paid subscriptions that expired in each interval (less those that came back in it) ÷ actives at its start."
        case .revenue: "Gross revenue, refunds, net and estimated proceeds, booked on the purchase date (USD)."
        case .refundRate: "Refunded ÷ paid transactions and refunds ÷ gross revenue, by the transaction's purchase date."
        case .freeTrials:
            "Trials started in each interval: converted on time or after a billing issue, canceled during the trial, to another product, refunded."
        case .retention: "Subscriptions that began paying in each interval, and the share that paid renewal n of those that could."
        case .ltv: "Customers first seen in each interval: revenue net of refunds per customer and per paying customer (USD)."
        case .refundRequests:
            "Refund requests Apple asked about in each interval: answered by the policy, granted, declined, and how many went as our answer preferred."
        case .billing:
            "Billing issues that began in each interval: recovered on time, within grace or in billing retry; lost; recovered revenue."
        }
    }

    /// Whether its values are money (USD, rounded to cents).
    var isMoney: Bool { self == .mrr || self == .arr || self == .revenue || self == .ltv }
}

/// One point of a series: the first day of its interval, its value, and the breakdown fields of its metric.
public struct MetricPoint: Hashable, Sendable, Encodable {
    public var start: CalendarDay
    public var value: Double
    /// Breakdown fields in a fixed order (`gross`, `proceeds` …).
    public var fields: [(name: String, value: Double)]

    public init(start: CalendarDay, value: Double, fields: [(name: String, value: Double)] = []) {
        self.start = start
        self.value = value
        self.fields = fields
    }

    public subscript(field: String) -> Double? { field == "value" ? value : fields.first { $0.name == field }?.value }

    public static func == (a: MetricPoint, b: MetricPoint) -> Bool {
        a.start == b.start && a.value == b.value && a.fields.map(\.name) == b.fields.map(\.name)
            && a.fields.map(\.value) == b.fields.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(start)
        hasher.combine(value)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(start.description, forKey: Key(stringValue: "start"))
        try c.encode(value, forKey: Key(stringValue: "value"))
        for field in fields { try c.encode(field.value, forKey: Key(stringValue: field.name)) }
    }
}

/// A metric's answer.
public struct MetricSeries: Hashable, Sendable, Encodable {
    public var metric: Metric
    public var interval: MetricInterval
    public var environment: String
    public var timeZone: String
    /// Money is in USD (the reporting currency), in units rounded to cents.
    public var currency = "USD"
    public var points: [MetricPoint]
    /// Money in currencies without a stored rate, in their own units, never converted 1:1 or dropped: for revenue
    /// the range's gross, for MRR what the last point leaves out.
    public var unconverted: [String: Double]
    /// The fields that are estimates (proceeds).
    public var estimated: [String]
    /// What a reader must know to trust the numbers, in plain words.
    public var notes: [String]

    public var csv: String {
        let names = ["start", "value"] + (points.first?.fields.map(\.name) ?? [])
        var lines = [names.joined(separator: ",")]
        for point in points {
            lines.append(
                ([point.start.description] + ([point.value] + point.fields.map(\.value)).map(Self.csvNumber)).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func csvNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// The headline numbers now.
public struct MetricsOverview: Hashable, Sendable, Codable {
    public var environment: String
    public var currency = "USD"
    public var mrr: Double
    public var arr: Double
    public var activeSubscriptions: Int
    public var activeTrials: Int
    /// Gross minus refunds of the purchases of the last 30 days.
    public var revenueLast30Days: Double
    public var refundsLast30Days: Double
    /// Of the trials that ended in the last 30 days, the share that converted; `nil` when none ended.
    public var trialConversionLast30Days: Double?
    /// Paid subscriptions that expired in the last 30 days (less those that came back) ÷ actives 30 days ago; `nil`
    /// without actives then.
    public var churnLast30Days: Double?
    /// Per figure (`mrr`, `revenueLast30Days`), what currencies without a rate leave out, in their own units.
    public var unconverted: [String: [String: Double]]
    public var estimated: [String]
    public var notes: [String]
}
