import Foundation

/// Numbers and instants as the dashboard writes them: fixed, locale-free (`1,234.56`), so that a page reads the same
/// on every server and a test can compare it with the API's JSON.
enum DashboardFormat {
    /// `1,234.56`: two decimals, thousands grouped.
    static func money(_ value: Double) -> String { grouped(value, decimals: 2) }

    /// Apple's milliunits with their currency: `1,234.99 EUR`; a dash without a price.
    static func money(milliunits: Int64?, currency: String?) -> String {
        guard let milliunits else { return "–" }
        return money(Double(milliunits) / 1000) + (currency.map { " " + $0 } ?? "")
    }

    /// `1,234`, or `1,234.5` when the value is not whole.
    static func count(_ value: Double) -> String { grouped(value, decimals: value == value.rounded() ? 0 : 1) }

    /// `12.3%`.
    static func percent(_ ratio: Double) -> String { grouped(ratio * 100, decimals: 1) + "%" }

    /// A value of a metric's field as shown: money, a ratio, or a count.
    static func value(_ value: Double, kind: ValueKind) -> String {
        switch kind {
        case .money: money(value)
        case .ratio: percent(value)
        case .count: count(value)
        }
    }

    enum ValueKind { case money, ratio, count }

    static func grouped(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "–" }
        let scale = pow(10, Double(decimals))
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let whole = Int64(scaled) / Int64(scale)
        let fraction = Int64(scaled) % Int64(scale)
        var digits = Array(String(whole))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(digits)
        if decimals > 0 {
            let fractionText = String(fraction)
            text += "." + String(repeating: "0", count: decimals - fractionText.count) + fractionText
        }
        return text
    }

    /// `2026-11-23 14:05 UTC`.
    static func instant(_ milliseconds: Int64) -> String {
        let seconds = Int64((Double(milliseconds) / 1000).rounded(.down))
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ n: Int?) -> String {
            let n = n ?? 0
            return n < 10 ? "0\(n)" : "\(n)"
        }
        return "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)) UTC"
    }

    /// Text for HTML or SVG, in element content and quoted attributes alike: `& < > " '` and `` ` `` escaped, by
    /// Unicode scalar. (By `Character` a quote followed by a combining mark, `"\u{301}`, is one grapheme that is not
    /// `"`, and would close an attribute unescaped.) Every template renders its `{{…}}` with this (`DashboardTemplates`).
    static func escaped(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            case "`": out.append(contentsOf: "&#96;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
