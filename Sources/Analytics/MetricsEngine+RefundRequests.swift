import Storage

/// The `refundRequests` metric: Apple's refund requests (`CONSUMPTION_REQUEST`) by the interval they came in, from the
/// refund requests' own table rather than the ledger.
extension MetricsEngine {
    func refundRequests(_ scope: Scope, days: [CalendarDay], bounds: [Int64]) async throws -> [MetricPoint] {
        guard let first = bounds.first, let last = bounds.last else { return [] }
        let tallies = try await database.refundRequestTallies(
            app: scope.appId, environment: scope.environment, productId: scope.productId, from: first, to: last)
        var counts = Array(repeating: RefundRequestCounts(), count: days.count)
        for tally in tallies {
            guard let bucket = Self.bucket(of: tally.requestedAt, in: bounds) else { continue }
            counts[bucket].add(tally)
        }
        return zip(days, counts).map { day, c in
            MetricPoint(
                start: day, value: Double(c.requested),
                fields: [
                    ("answered", Double(c.answered)), ("granted", Double(c.granted)), ("declined", Double(c.declined)),
                    ("reversed", Double(c.reversed)), ("grantedAsAnswered", Double(c.grantedAsAnswered)),
                    ("declinedAsAnswered", Double(c.declinedAsAnswered)),
                    ("shareGrantedByOurAnswer", c.granted > 0 ? Double(c.grantedAsAnswered) / Double(c.granted) : 0),
                ])
        }
    }
}

/// Refund requests of one interval, by what became of them.
struct RefundRequestCounts {
    var requested = 0
    var answered = 0
    var granted = 0
    var declined = 0
    var reversed = 0
    /// Granted by Apple after our answer preferred a grant.
    var grantedAsAnswered = 0
    /// Declined by Apple after our answer preferred a decline.
    var declinedAsAnswered = 0

    mutating func add(_ tally: RefundRequestTally) {
        requested += 1
        if tally.status == RefundRequestRecord.Status.sent.rawValue { answered += 1 }
        if tally.granted {
            granted += 1
            if tally.outcome == .reversed { reversed += 1 }
            if tally.answeredGrant { grantedAsAnswered += 1 }
        } else if tally.outcome == .declined {
            declined += 1
            if tally.answeredDecline { declinedAsAnswered += 1 }
        }
    }
}
