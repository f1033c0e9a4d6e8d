import Entitlements
import Foundation

/// Compares what a Storekeeper server answers with the simulator's ground truth.
public enum TruthCheck {
    /// `/v1/customers/{appUserId}` with the id percent-encoded (server-named ids hold `$` and `:`).
    public static func customerPath(_ appUserId: String) -> String {
        "/v1/customers/" + (appUserId.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-"])) ?? appUserId)
    }

    /// The difference between a customer body (`GET /v1/customers/{appUserId}`) and the truth; nil when equal.
    public static func compare(customerBody: Data, truth: CustomerTruth, catalog: Catalog) -> String? {
        let state: CustomerState
        do {
            state = try JSONDecoder().decode(CustomerState.self, from: customerBody)
        } catch {
            return "the server's answer is not a customer state: \(String(decoding: customerBody.prefix(300), as: UTF8.self))"
        }
        let seen = CustomerTruth(server: state, catalog: catalog)
        guard seen != truth else { return nil }
        return "expected:\n\(truth)\nserver:\n\(seen)"
    }

    struct EventPage: Decodable {
        struct Event: Decodable {
            var id: String
            var type: SubscriptionEventType
            var effectiveAt: Int64
            var originalTransactionId: String?
            var retractedAt: Int64?
        }
        var events: [Event]
        var nextCursor: String
    }

    /// The events a page of the customer's event stream (`GET /v1/customers/{appUserId}/events`) holds as they
    /// stand (an event's latest record counts; retracted ones are gone), and the cursor of the next page.
    public static func events(page: Data) throws -> (events: [String: ExpectedEvent?], next: String, count: Int) {
        let decoded = try JSONDecoder().decode(EventPage.self, from: page)
        var standing: [String: ExpectedEvent?] = [:]
        for event in decoded.events {
            standing[event.id] =
                event.retractedAt == nil
                ? ExpectedEvent(type: event.type, originalTransactionId: event.originalTransactionId ?? "", effectiveAt: event.effectiveAt)
                : nil as ExpectedEvent?
        }
        return (standing, decoded.nextCursor, decoded.events.count)
    }

    /// The difference between the server's standing events and the expected ones; nil when equal.
    public static func compare(events seen: [ExpectedEvent], expected: [ExpectedEvent]) -> String? {
        let a = seen.sorted()
        let b = expected.sorted()
        guard a != b else { return nil }
        let missing = b.filter { !a.contains($0) }
        let extra = a.filter { !b.contains($0) }
        return "events differ; missing on the server: \(missing), not expected: \(extra)"
    }
}
