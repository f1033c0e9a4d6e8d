import Experiments
import Foundation

/// What is wrong with a `/v1/subscribers/{id}` answer: against RevenueCat's published shape (the schema in
/// `Fixtures/revenuecat-subscriber.schema.json`), and against the customer API's own entitlements read at the same
/// instant. RevenueCat's clients read access from `expires_date` alone: null is for life, a future date is active.
enum RevenueCatShape {
    static let schema: JSONValue? = {
        guard let url = Bundle.module.url(forResource: "revenuecat-subscriber.schema", withExtension: "json", subdirectory: "Fixtures"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return try? JSONDecoder().decode(JSONValue.self, from: data)
    }()

    static func problems(subscriberBody: Data, customerBody: Data) -> [String] {
        guard let schema else { return ["the RevenueCat schema fixture does not load"] }
        guard let answer = try? JSONDecoder().decode(JSONValue.self, from: subscriberBody) else {
            return ["the subscriber answer is not JSON"]
        }
        var found = validate(answer, schema, path: "$")
        guard let customer = try? JSONDecoder().decode(JSONValue.self, from: customerBody),
            case .object(let ours)? = customer["entitlements"], case .number(let requestMs)? = answer["request_date_ms"],
            case .object(let theirs)? = answer["subscriber"]?["entitlements"]
        else { return found + ["the answers do not have the fields compared"] }
        let subscriptions: [JSONValue] = if case .array(let list)? = customer["subscriptions"] { list } else { [] }
        let oneTime: [JSONValue] = if case .array(let list)? = customer["nonSubscriptions"] { list } else { [] }
        // RevenueCat's SDKs drop an entitlement whose product is not a key of `subscriptions` or `non_subscriptions`.
        var listedProducts: Set<String> = []
        for member in ["subscriptions", "non_subscriptions"] {
            if case .object(let products)? = answer["subscriber"]?[member] { listedProducts.formUnion(products.keys) }
        }
        for (name, entry) in theirs {
            if case .string(let productId)? = entry["product_identifier"], !listedProducts.contains(productId) {
                found.append("entitlement \(name) names \(productId), which is not in subscriptions or non_subscriptions")
            }
        }
        for (name, access) in ours {
            let active = access["active"] == .bool(true)
            let listed = theirs[name]
            let readsActive = listed.map { entry -> Bool in
                guard case .string(let expires)? = entry["expires_date"] else { return true }
                return (date(expires)?.timeIntervalSince1970 ?? 0) * 1000 > requestMs
            }
            if active, readsActive != true {
                found.append(
                    "entitlement \(name) is active in the customer API but \(listed == nil ? "missing" : "expired") in the RevenueCat shape"
                )
            }
            if !active, readsActive == true {
                found.append("entitlement \(name) is inactive in the customer API but reads active in the RevenueCat shape")
            }
            if case .string(let productId)? = access["productId"], let entry = listed, entry["product_identifier"] != .string(productId) {
                found.append("entitlement \(name): RevenueCat's product is not \(productId), the customer API's")
            }
            // RevenueCat keeps a lapsed subscription's entitlement, with its past expiry.
            if !active, listed == nil, case .string? = access["productId"], let transaction = access["transactionId"],
                subscriptions.contains(where: { $0["originalTransactionId"] == transaction })
            {
                found.append("entitlement \(name), given by a subscription until it lapsed, is missing")
            }
            // And a refunded one-time purchase's, expired at the refund.
            if !active, listed == nil, case .string? = access["productId"], let transaction = access["transactionId"],
                oneTime.contains(where: { $0["transactionId"] == transaction && $0["revocation"] != nil && $0["revocation"] != .null })
            {
                found.append("entitlement \(name), given by a one-time purchase until it was refunded, is missing")
            }
        }
        for name in theirs.keys where ours[name] == nil { found.append("entitlement \(name) is not one of the customer API's") }
        return found
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// The subset of JSON Schema the fixture uses: type (one or a list, "null" among them), required, properties,
    /// additionalProperties (false or a schema), items, enum and the date-time format.
    static func validate(_ value: JSONValue, _ schema: JSONValue, path: String) -> [String] {
        let types: [String] =
            switch schema["type"] {
            case .string(let type)?: [type]
            case .array(let list)?: list.compactMap { if case .string(let type) = $0 { type } else { nil } }
            default: []
            }
        if !types.isEmpty, !types.contains(where: { matches(value, $0) }) {
            return ["\(path) is not \(types.joined(separator: " or "))"]
        }
        var found: [String] = []
        switch value {
        case .string(let text):
            if case .array(let allowed)? = schema["enum"], !allowed.contains(value) { found.append("\(path): '\(text)' is not allowed") }
            if schema["format"] == .string("date-time"), date(text) == nil { found.append("\(path): '\(text)' is not a date-time") }
        case .object(let object):
            if case .array(let required)? = schema["required"] {
                for case .string(let key) in required where object[key] == nil { found.append("\(path): \(key) is missing") }
            }
            for (key, member) in object {
                if let property = schema["properties"]?[key] {
                    found += validate(member, property, path: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"], additional != .bool(false) {
                    found += validate(member, additional, path: "\(path).\(key)")
                } else if schema["additionalProperties"] == .bool(false) {
                    found.append("\(path): \(key) is not in RevenueCat's shape")
                }
            }
        case .array(let array):
            if let items = schema["items"] {
                for (index, member) in array.enumerated() { found += validate(member, items, path: "\(path)[\(index)]") }
            }
        case .null, .bool, .number: break
        }
        return found
    }

    static func matches(_ value: JSONValue, _ type: String) -> Bool {
        switch (value, type) {
        case (.null, "null"), (.string, "string"), (.object, "object"), (.array, "array"), (.bool, "boolean"): true
        case (.number(let number), "integer"): number.rounded() == number
        default: false
        }
    }
}

extension JSONValue {
    /// An object's member, or nil.
    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }
}
