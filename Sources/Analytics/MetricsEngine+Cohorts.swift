import SQLKit
import Storage

/// The cohort metrics: each interval's point describes what started in it (trials, paying subscriptions, customers)
/// and what became of it by now. Formulas: docs/metrics.md.
extension MetricsEngine {
    /// The realized-LTV windows, in days after a customer was first seen (day 0: the first 24 hours).
    static let lifetimeWindows: [Int64] = [0, 7, 30, 90, 180, 365]
    /// Renewals that retention follows.
    static let retentionRenewals = 1...12

    // MARK: - Free trials (Apphud's report)

    /// Trials by start: conversions on time or after a billing issue, cancellations during the trial and the average
    /// time to cancel, conversions to another product, refunds after conversion.
    func freeTrials(_ scope: Scope, days: [CalendarDay], bounds: [Int64], now: Int64) async throws -> [MetricPoint] {
        guard let first = bounds.first, let last = bounds.last else { return [] }
        var query = SQLQueryString(
            """
            SELECT t.start_at AS s, t.end_at AS e, t.next_start AS n, COALESCE(t.next_refunded, 0) AS r,
                CASE WHEN p.product_id IS NOT NULL AND p.product_id <> t.product_id THEN 1 ELSE 0 END AS other,
                COALESCE(t.will_renew, 1) AS renews, t.active_until AS u,
                (SELECT MIN(v.effective_at) FROM events v WHERE v.app_id = t.app_id AND v.original_transaction_id = t.original_transaction_id
                    AND v.environment = t.environment AND v.type = 'trial_canceled' AND v.retracted_at IS NULL
                    AND v.effective_at >= t.start_at AND (t.end_at IS NULL OR v.effective_at < t.end_at)) AS canceled,
                (SELECT COUNT(*) FROM events v WHERE v.app_id = t.app_id AND v.original_transaction_id = t.original_transaction_id
                    AND v.environment = t.environment AND v.type = 'billing_issue' AND v.retracted_at IS NULL
                    AND v.effective_at >= t.start_at AND t.next_start IS NOT NULL AND v.effective_at <= t.next_start) AS issues
            FROM (SELECT * FROM ledger WHERE\u{20}
            """)
        query.appendInterpolation(scope.condition(Self.trial + " AND start_at >= \(first) AND start_at < \(last)"))
        query.appendInterpolation(
            unsafeRaw: """
                ) t LEFT JOIN ledger p ON p.app_id = t.app_id AND p.environment = t.environment
                    AND p.original_transaction_id = t.original_transaction_id AND p.start_at = t.next_start AND p.kind <> 'trial'
                """)
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        // Per interval: trials, converted, on time, after a billing issue, canceled, days to cancel (sum), other
        // product, refunded, pending.
        var sums = Array(repeating: Array(repeating: 0.0, count: 9), count: days.count)
        for row in rows {
            let start = try row.decode(column: "s", as: Int64.self)
            guard let i = Self.bucket(of: start, in: bounds) else { continue }
            let converted = try row.decode(column: "n", as: Int64?.self) != nil
            let issues = try row.decode(column: "issues", as: Int64.self)
            let afterIssue = converted && issues > 0
            let canceled = try row.decode(column: "canceled", as: Int64?.self)
            let activeUntil = try row.decode(column: "u", as: Int64?.self)
            let renews = try row.decode(column: "renews", as: Int64.self) == 1
            let pending = !converted && renews && (activeUntil.map { $0 > now } ?? true)
            let otherProduct = try row.decode(column: "other", as: Int64.self) == 1
            let refunded = try row.decode(column: "r", as: Int64.self) != 0
            let add: [Double] = [
                1, converted ? 1 : 0, converted && !afterIssue ? 1 : 0, afterIssue ? 1 : 0, canceled == nil ? 0 : 1,
                canceled.map { Double($0 - start) / Double(Self.day) } ?? 0, converted && otherProduct ? 1 : 0,
                converted && refunded ? 1 : 0, pending ? 1 : 0,
            ]
            for k in add.indices { sums[i][k] += add[k] }
        }
        return zip(days, sums).map { day, v in
            MetricPoint(
                start: day, value: v[0],
                fields: [
                    ("converted", v[1]), ("convertedOnTime", v[2]), ("convertedAfterBillingIssue", v[3]), ("pending", v[8]),
                    ("conversion", v[0] > 0 ? v[1] / v[0] : 0), ("canceledDuringTrial", v[4]),
                    ("averageDaysToCancel", v[4] > 0 ? (v[5] / v[4] * 100).rounded() / 100 : 0),
                    ("convertedToOtherProduct", v[6]), ("refundedAfterConversion", v[7]),
                ])
        }
    }

    // MARK: - Subscription retention

    /// Subscriptions that started paying in each interval (renewal 0), and for each renewal n the share that paid it
    /// among those that had the opportunity: period n−1 ended by now, or renewal n was paid.
    func retention(_ scope: Scope, days: [CalendarDay], bounds: [Int64], now: Int64) async throws -> [MetricPoint] {
        guard let first = bounds.first, let last = bounds.last else { return [] }
        let deepest = Int64(Self.retentionRenewals.upperBound)
        var query = SQLQueryString(
            "SELECT original_transaction_id AS o, renewal_number AS k, start_at AS s, end_at AS e, next_start AS n FROM ledger WHERE ")
        // The periods, up to the deepest renewal followed, of the subscriptions whose paying began in the range.
        query.appendInterpolation(scope.condition(Self.paid + " AND renewal_number <= \(deepest) AND start_at >= \(first)"))
        query.appendInterpolation(unsafeRaw: " AND original_transaction_id IN (SELECT original_transaction_id FROM ledger WHERE ")
        query.appendInterpolation(scope.condition(Self.paid + " AND renewal_number = 0 AND start_at >= \(first) AND start_at < \(last)"))
        query.appendInterpolation(unsafeRaw: ")")
        query.appendInterpolation(unsafeRaw: " ORDER BY original_transaction_id, start_at")
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        // Walk each subscription's periods in time; a renewal number 0 begins a run (a resubscription begins another).
        var cohort = Array(repeating: 0.0, count: days.count)
        var eligible = Array(repeating: Array(repeating: 0.0, count: Self.retentionRenewals.count), count: days.count)
        var renewed = eligible
        var run: (bucket: Int, periods: [Int64: (end: Int64?, next: Int64?)])?
        func close() {
            guard let current = run else { return }
            for n in Self.retentionRenewals {
                guard let previous = current.periods[Int64(n - 1)] else { break }
                let paid = current.periods[Int64(n)] != nil
                guard paid || previous.end.map({ $0 <= now }) == true else { break }
                eligible[current.bucket][n - 1] += 1
                if paid { renewed[current.bucket][n - 1] += 1 }
            }
            run = nil
        }
        var original: String?
        for row in rows {
            let o = try row.decode(column: "o", as: String.self)
            let k = try row.decode(column: "k", as: Int64?.self) ?? 0
            if o != original || k == 0 {
                close()
                original = o
                if k == 0, let bucket = Self.bucket(of: try row.decode(column: "s", as: Int64.self), in: bounds) {
                    cohort[bucket] += 1
                    run = (bucket, [:])
                }
            }
            run?.periods[k] = (try row.decode(column: "e", as: Int64?.self), try row.decode(column: "n", as: Int64?.self))
        }
        close()
        return days.indices.map { i in
            var fields: [(name: String, value: Double)] = []
            for n in Self.retentionRenewals {
                let share = eligible[i][n - 1] > 0 ? renewed[i][n - 1] / eligible[i][n - 1] : 0
                fields.append(("renewal\(n)", share))
                fields.append(("eligible\(n)", eligible[i][n - 1]))
            }
            return MetricPoint(start: days[i], value: cohort[i], fields: fields)
        }
    }

    // MARK: - Realized LTV

    /// Customers by the interval they were first seen in, and the revenue net of refunds they brought within each
    /// window (over the customers whose window has passed), per customer and per paying customer.
    func lifetimeValue(_ scope: Scope, days: [CalendarDay], bounds: [Int64], now: Int64) async throws
        -> (points: [MetricPoint], unconverted: [String: Double])
    {
        guard let first = bounds.first, let last = bounds.last else { return ([], [:]) }
        var query = SQLQueryString(
            """
            SELECT c.id AS customer, c.created_at AS seen, l.start_at AS s, l.usd_rate AS rate, l.currency AS currency,
                l.price - COALESCE(l.refund_amount, 0) AS net
            FROM customers c LEFT JOIN (SELECT customer_id, start_at, usd_rate, currency, price, refund_amount FROM ledger WHERE\u{20}
            """)
        query.appendInterpolation(scope.condition(Self.revenue))
        query.appendInterpolation(unsafeRaw: ") l ON l.customer_id = c.id WHERE c.app_id = ")
        query.appendInterpolation(bind: scope.appId)
        query.appendInterpolation(unsafeRaw: " AND c.created_at >= \(first) AND c.created_at < \(last)")
        // The environment's customers: first seen there, or with a purchase or an exposure there.
        query.appendInterpolation(unsafeRaw: " AND ")
        query.appendInterpolation(CustomerEnvironments.contains(scope.environment))
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        var customers: [String: (seen: Int64, purchases: [(at: Int64, usd: Double)])] = [:]
        var unconverted: [String: Double] = [:]
        for row in rows {
            let id = try row.decode(column: "customer", as: String.self)
            let seen = try row.decode(column: "seen", as: Int64.self)
            var entry = customers[id] ?? (seen, [])
            if let at = try row.decode(column: "s", as: Int64?.self), let net = try row.decode(column: "net", as: Int64?.self) {
                if let rate = try row.decode(column: "rate", as: Double?.self) {
                    entry.purchases.append((at, rate * Double(net) / 1000))
                } else if let currency = try row.decode(column: "currency", as: String?.self) {
                    unconverted[currency, default: 0] += Double(net) / 1000
                }
            }
            customers[id] = entry
        }
        let windows = Self.lifetimeWindows
        // Per interval: customers, paying; per window: revenue, paying, customers whose window has passed.
        var count = Array(repeating: 0.0, count: days.count)
        var paying = count
        var revenue = count
        var windowRevenue = Array(repeating: Array(repeating: 0.0, count: windows.count), count: days.count)
        var windowPaying = windowRevenue
        var windowCustomers = windowRevenue
        for customer in customers.values {
            guard let i = Self.bucket(of: customer.seen, in: bounds) else { continue }
            count[i] += 1
            let total = customer.purchases.reduce(0) { $0 + $1.usd }
            revenue[i] += total
            if customer.purchases.contains(where: { $0.usd > 0 }) { paying[i] += 1 }
            for (w, window) in windows.enumerated() {
                let end = customer.seen + (window + 1) * Self.day
                guard end <= now else { continue }
                windowCustomers[i][w] += 1
                let within = customer.purchases.filter { $0.at < end }
                windowRevenue[i][w] += within.reduce(0) { $0 + $1.usd }
                if within.contains(where: { $0.usd > 0 }) { windowPaying[i][w] += 1 }
            }
        }
        let points = days.indices.map { i in
            var fields: [(name: String, value: Double)] = [("customers", count[i]), ("payingCustomers", paying[i])]
            for (w, window) in windows.enumerated() {
                let (n, p, r) = (windowCustomers[i][w], windowPaying[i][w], windowRevenue[i][w])
                fields.append(("customersDay\(window)", n))
                fields.append(("perCustomerDay\(window)", n > 0 ? cents(r / n) : 0))
                fields.append(("perPayingCustomerDay\(window)", p > 0 ? cents(r / p) : 0))
            }
            fields.append(("perPayingCustomer", paying[i] > 0 ? cents(revenue[i] / paying[i]) : 0))
            return MetricPoint(start: days[i], value: count[i] > 0 ? cents(revenue[i] / count[i]) : 0, fields: fields)
        }
        return (points, unconverted.filter { $0.value != 0 }.mapValues(cents))
    }

    // MARK: - Billing

    /// Billing issues by the interval they began in, and how each ended: recovered on time (within a day: the first
    /// retry), within the grace period, or in billing retry after access was lost; lost (the subscription expired);
    /// or not yet resolved. With the revenue of the renewals that recovered.
    func billing(_ scope: Scope, days: [CalendarDay], bounds: [Int64]) async throws -> [MetricPoint] {
        guard let first = bounds.first, let last = bounds.last else { return [] }
        func events(_ condition: String) -> SQLQueryString {
            var query = SQLQueryString("SELECT original_transaction_id AS o, type, effective_at AS at FROM events WHERE app_id = ")
            query.appendInterpolation(bind: scope.appId)
            query.appendInterpolation(unsafeRaw: " AND environment = ")
            query.appendInterpolation(bind: scope.environment)
            query.appendInterpolation(unsafeRaw: " AND retracted_at IS NULL AND \(condition)")
            return query
        }
        // The subscriptions with a billing issue that began in the range, among those the request's filters select
        // (product, group, storefront: the ledger knows them). Only theirs are read below.
        var issues = events("type = 'billing_issue' AND effective_at >= \(first) AND effective_at < \(last)")
        issues.appendInterpolation(unsafeRaw: " AND original_transaction_id IN (SELECT original_transaction_id FROM ledger WHERE ")
        issues.appendInterpolation(scope.condition(Self.paid))
        var withIssue = SQLQueryString(" AND original_transaction_id IN (SELECT o FROM (")
        withIssue.appendInterpolation(issues)
        withIssue.appendInterpolation(unsafeRaw: ")) issues)")
        var query = events(
            "type IN ('billing_issue', 'billing_recovered', 'grace_period_started', 'grace_period_expired', 'subscription_expired')")
        query.appendInterpolation(withIssue)
        // Events of one instant in the order they were recorded (a billing issue before its grace period).
        query.appendInterpolation(unsafeRaw: " ORDER BY original_transaction_id, effective_at, seq")
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }.map { row in
            (
                original: try row.decode(column: "o", as: String.self), type: try row.decode(column: "type", as: String.self),
                at: try row.decode(column: "at", as: Int64.self)
            )
        }
        // The paid periods of those subscriptions, if any recovered: the renewal that recovered is the first to start at
        // or after the issue.
        var paidRows: [any SQLRow] = []
        if rows.contains(where: { $0.type == "billing_recovered" }) {
            var paidQuery = SQLQueryString(
                "SELECT original_transaction_id AS o, start_at AS s, \(unsafeRaw: Self.usd("price")) AS usd FROM ledger WHERE ")
            paidQuery.appendInterpolation(scope.condition(Self.paid + " AND start_at >= \(first)"))
            paidQuery.appendInterpolation(withIssue)
            paidQuery.appendInterpolation(unsafeRaw: " ORDER BY original_transaction_id, start_at")
            paidRows = try await database.read { [paidQuery] sql in try await sql.raw(paidQuery).all() }
        }
        var periods: [String: [(start: Int64, usd: Double)]] = [:]
        for row in paidRows {
            periods[try row.decode(column: "o", as: String.self), default: []].append(
                (try row.decode(column: "s", as: Int64.self), try row.decode(column: "usd", as: Double?.self) ?? 0))
        }
        // Per interval: started, on time, within grace, in billing retry, lost, unresolved, recovered revenue.
        var sums = Array(repeating: Array(repeating: 0.0, count: 7), count: days.count)
        var open: (original: String, at: Int64, bucket: Int?, grace: Bool, graceExpired: Int64?)?
        func close(_ outcome: Int, revenue: Double = 0) {
            if let issue = open, let bucket = issue.bucket {
                sums[bucket][outcome] += 1
                sums[bucket][6] += revenue
            }
            open = nil
        }
        for (original, type, at) in rows {
            if let issue = open, issue.original != original { close(5) }
            switch type {
            case "billing_issue" where open == nil:
                let bucket = Self.bucket(of: at, in: bounds)
                if let bucket { sums[bucket][0] += 1 }
                open = (original, at, bucket, false, nil)
            case "grace_period_started": open?.grace = true
            case "grace_period_expired": open?.graceExpired = at
            case "billing_recovered":
                guard let issue = open else { continue }
                let outcome =
                    at - issue.at <= Self.day ? 1 : issue.grace && (issue.graceExpired.map { at <= $0 } ?? true) ? 2 : 3
                let renewal = periods[original]?.first { $0.start >= issue.at && $0.start <= at }
                close(outcome, revenue: renewal?.usd ?? 0)
            case "subscription_expired" where open != nil: close(4)
            default: continue
            }
        }
        close(5)
        return zip(days, sums).map { day, v in
            let recovered = v[1] + v[2] + v[3]
            return MetricPoint(
                start: day, value: v[0],
                fields: [
                    ("recovered", recovered), ("recoveredOnTime", v[1]), ("recoveredWithinGrace", v[2]), ("recoveredInBillingRetry", v[3]),
                    ("lost", v[4]), ("unresolved", v[5]), ("recoveryRate", v[0] > 0 ? recovered / v[0] : 0),
                    ("recoveredRevenue", cents(v[6])),
                ])
        }
    }
}
