import Foundation

/// The kinds of destination, each with the configuration fields it takes. A field is either readable (stored in the
/// configuration the API shows) or secret (stored apart, shown never: tokens, keys, Slack's URL, a static
/// `Authorization` header).
public enum DestinationKind: String, Sendable, Hashable, CaseIterable, Codable {
    case webhook, slack, telegram, amplitude, mixpanel

    /// One configuration field.
    public struct Field: Sendable, Hashable {
        public enum Form: Sendable, Hashable {
            /// An http or https URL with a host.
            case url
            /// Free text on one line.
            case text
            case oneOf([String])
        }
        public let name: String
        public let secret: Bool
        public let required: Bool
        public let form: Form
        public let description: String
    }

    /// Naming presets for the analytics destinations.
    public static let presets = AnalyticsNaming.Preset.allCases.map(\.rawValue)

    public var fields: [Field] {
        switch self {
        case .webhook:
            [
                Field(name: "url", secret: false, required: true, form: .url, description: "Where events are POSTed."),
                Field(
                    name: "authorization", secret: true, required: false, form: .text,
                    description: "A static Authorization header value sent with every request (secret)."),
            ]
        case .slack:
            [Field(name: "url", secret: true, required: true, form: .url, description: "The Slack incoming webhook URL (secret).")]
        case .telegram:
            [
                Field(name: "botToken", secret: true, required: true, form: .text, description: "The bot's token (secret)."),
                Field(name: "chatId", secret: false, required: true, form: .text, description: "The chat, group or @channel."),
                Field(
                    name: "baseURL", secret: false, required: false, form: .url,
                    description: "The Bot API's address (default \(Self.telegramBaseURL))."),
            ]
        case .amplitude:
            [
                Field(name: "apiKey", secret: true, required: true, form: .text, description: "The project's API key (secret)."),
                Field(name: "region", secret: false, required: false, form: .oneOf(["us", "eu"]), description: "us (default) or eu."),
                Field(name: "baseURL", secret: false, required: false, form: .url, description: "Overrides the region's host."),
                Field(name: "preset", secret: false, required: false, form: .oneOf(Self.presets), description: "Event names."),
            ]
        case .mixpanel:
            [
                Field(
                    name: "projectToken", secret: true, required: true, form: .text,
                    description: "The project token (secret): the events' token, and the import's credentials without a service account."),
                Field(name: "projectId", secret: false, required: false, form: .text, description: "Required with a service account."),
                Field(
                    name: "serviceAccountUsername", secret: false, required: false, form: .text,
                    description: "A service account for /import (with its secret)."),
                Field(name: "serviceAccountSecret", secret: true, required: false, form: .text, description: "Its secret (secret)."),
                Field(
                    name: "region", secret: false, required: false, form: .oneOf(["us", "eu", "in"]), description: "us (default), eu or in."
                ),
                Field(name: "baseURL", secret: false, required: false, form: .url, description: "Overrides the region's host."),
                Field(name: "preset", secret: false, required: false, form: .oneOf(Self.presets), description: "Event names."),
            ]
        }
    }

    public static let telegramBaseURL = "https://api.telegram.org"

    /// Splits an operator's configuration into its readable part and its secrets, checking every field: unknown
    /// ones, missing required ones and malformed values are refused with the field named (`config.<name>`).
    /// With `existing` (a change), fields not given keep their stored values, and null (`nil`) removes an optional one.
    public func split(_ given: [String: String?], existing: (readable: [String: String], secrets: [String: String])? = nil)
        throws(IntegrationError) -> (readable: [String: String], secrets: [String: String])
    {
        let byName = Dictionary(fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in given.keys.sorted() where byName[name] == nil {
            throw IntegrationError(
                .invalidConfiguration,
                "a \(rawValue) destination has no field '\(name)' (it takes \(fields.map(\.name).joined(separator: ", ")))",
                field: "config.\(name)")
        }
        var readable = existing?.readable ?? [:]
        var secrets = existing?.secrets ?? [:]
        for field in fields {
            guard let entry = given[field.name] else { continue }
            guard let value = entry else {
                guard !field.required else {
                    throw IntegrationError(.invalidConfiguration, "\(field.name) is required", field: "config.\(field.name)")
                }
                readable[field.name] = nil
                secrets[field.name] = nil
                continue
            }
            try Self.check(value, field)
            if field.secret { secrets[field.name] = value } else { readable[field.name] = value }
        }
        for field in fields where field.required && (field.secret ? secrets[field.name] : readable[field.name]) == nil {
            throw IntegrationError(.invalidConfiguration, "a \(rawValue) destination needs \(field.name)", field: "config.\(field.name)")
        }
        if self == .mixpanel, (readable["serviceAccountUsername"] == nil) != (secrets["serviceAccountSecret"] == nil) {
            throw IntegrationError(
                .invalidConfiguration, "a service account needs both its username and its secret", field: "config.serviceAccountSecret")
        }
        if self == .mixpanel, readable["serviceAccountUsername"] != nil, readable["projectId"] == nil {
            throw IntegrationError(.invalidConfiguration, "a service account needs the projectId", field: "config.projectId")
        }
        return (readable, secrets)
    }

    private static func check(_ value: String, _ field: Field) throws(IntegrationError) {
        let name = "config.\(field.name)"
        guard !value.isEmpty, value.utf8.count <= 2048 else {
            throw IntegrationError(.invalidConfiguration, "\(field.name) is 1 to 2048 bytes", field: name)
        }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw IntegrationError(.invalidConfiguration, "\(field.name) is one line without control characters", field: name)
        }
        switch field.form {
        case .text:
            break
        case .url:
            guard AddressPolicy.httpHost(of: value) != nil else {
                throw IntegrationError(.invalidConfiguration, "\(field.name) is an http or https URL with a host", field: name)
            }
        case .oneOf(let choices):
            guard choices.contains(value) else {
                throw IntegrationError(.invalidConfiguration, "\(field.name) is one of \(choices.joined(separator: ", "))", field: name)
            }
        }
    }
}
