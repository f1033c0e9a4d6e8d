/// What the refund and the retention policies ask of their rules: a name each, unique, and min/max bounds that make a
/// range. One place, so the two policies refuse the same mistakes with the same words.
enum PolicyRuleChecks {
    /// Each name is 1–100 characters and no two are equal; the field is `rules[i].name`.
    static func names(_ names: [String]) throws(CoreError) {
        var seen = Set<String>()
        for (index, name) in names.enumerated() {
            guard !name.isEmpty, name.count <= 100 else {
                throw .invalidInput(field: "rules[\(index)].name", "a rule needs a name (1–100 characters)")
            }
            guard seen.insert(name).inserted else { throw .invalidInput(field: "rules[\(index)].name", "two rules are named '\(name)'") }
        }
    }

    /// `min<name>` and `max<name>` of the rule at `field`: neither below zero, and min not above max.
    static func range<T: Comparable & Sendable>(_ low: T?, _ high: T?, _ name: String, field: String, floor: T) throws(CoreError) {
        if let low, low < floor { throw .invalidInput(field: "\(field).min\(name)", "cannot be negative") }
        if let high, high < floor { throw .invalidInput(field: "\(field).max\(name)", "cannot be negative") }
        if let low, let high, low > high { throw .invalidInput(field: "\(field).min\(name)", "is above max\(name)") }
    }
}
