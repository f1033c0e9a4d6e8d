import Foundation

/// An event told for people (Slack, Telegram): what happened, to whom, the product, the price in its currency and in
/// US dollars when a rate is stored, the environment.
public enum EventText {
    /// `subscription_renewed` → `Subscription renewed`; a retraction says so.
    public static func title(_ event: OutboundEvent) -> String {
        let words = event.type.split(separator: "_").joined(separator: " ")
        let title = words.prefix(1).uppercased() + words.dropFirst()
        return event.retractedAt == nil ? title : "Retracted: \(title)"
    }

    /// `9.99 EUR (≈ 10.84 USD)`, `4.99 USD`, or nil without a price.
    public static func price(_ event: OutboundEvent) -> String? {
        guard let price = event.price, let currency = event.currency else { return nil }
        return money(price, currency, usd: event.usdPrice)
    }

    /// What a refund gave back, as money returned: `-29.99 EUR (≈ -32.50 USD)` (a prorated refund's share, not the
    /// price); a refund whose sale carried no price says so rather than leaving the amount out. Nil for any other event.
    public static func returned(_ event: OutboundEvent) -> String? {
        guard event.type == "refunded" else { return nil }
        guard let currency = event.currency, let moved = event.revenue ?? event.price.map({ -abs($0) }) else {
            return "not known (the refunded transaction carried no price)"
        }
        return money(-abs(moved), currency, usd: event.revenueUSD.map { -abs($0) })
    }

    static func money(_ milliunits: Int64, _ currency: String, usd: Double?) -> String {
        let local = "\(amount(milliunits)) \(currency)"
        guard currency != "USD", let usd else { return local }
        return "\(local) (≈ \(String(format: "%.2f", usd)) USD)"
    }

    /// Milliunits as a decimal amount with two decimals (more when the price has them).
    static func amount(_ milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        return fraction % 10 == 0
            ? "\(sign)\(whole).\(String(format: "%02d", fraction / 10))" : "\(sign)\(whole).\(String(format: "%03d", fraction))"
    }

    /// A labelled fact of an event, as the chat messages show it.
    public struct Fact: Sendable, Hashable {
        public var label: String
        public var value: String

        init(_ label: String, _ value: String) {
            self.label = label
            self.value = value
        }
    }

    /// The labelled facts, in order; absent ones left out.
    public static func facts(_ event: OutboundEvent) -> [Fact] {
        var facts: [Fact] = [Fact("Customer", event.appUserId ?? event.customerId)]
        if let product = event.productId { facts.append(Fact("Product", product)) }
        if let returned = returned(event) {
            facts.append(Fact("Returned", returned))
        } else if let price = price(event) {
            facts.append(Fact("Price", price))
        }
        facts.append(Fact("Environment", event.environment))
        facts.append(Fact("App", event.bundleId))
        return facts
    }

    /// One line: the title and the facts' values.
    public static func line(_ event: OutboundEvent) -> String {
        ([title(event)] + facts(event).map(\.value)).joined(separator: " · ")
    }

    /// `&`, `<` and `>` escaped: what Slack's mrkdwn and Telegram's HTML both need.
    public static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Reading a destination's JSON answer.
enum AnswerJSON {
    static func object(_ answer: AttemptAnswer) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any]
    }

    /// A whole number from a destination's JSON, or nil when it is none or beyond ±2^53 (a destination's number must
    /// not trap the conversion).
    static func int(_ value: Any?) -> Int? {
        if let number = value as? NSNumber {
            let double = number.doubleValue
            guard double.isFinite, double == double.rounded(), abs(double) <= 9_007_199_254_740_992 else { return nil }
            return Int(double)
        }
        if let text = value as? String { return Int(text) }
        return nil
    }
}
