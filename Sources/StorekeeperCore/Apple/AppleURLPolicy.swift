import Foundation
import Integrations

/// Where calls made on an app's behalf may go. They carry an App Store Connect token or the app's shared secret, so
/// by default only to Apple: `https` on Apple's own hosts. An operator who runs the simulator or a test double allows
/// other URLs (`STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS`), and then only to addresses the destinations' policy allows
/// (`AddressPolicy`: no loopback, private or metadata address unless `STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS`). Checked when
/// a configuration is written (the field named) and again before every call (a configuration stored before).
/// Redirects are never followed with credentials (`AppleAPIAccess.httpClient`).
public struct AppleURLPolicy: Sendable {
    /// The App Store Server API's hosts (current and former) and verifyReceipt's.
    public static let appleHosts: Set<String> = [
        "api.storekit.apple.com", "api.storekit-sandbox.apple.com", "api.storekit.itunes.apple.com",
        "api.storekit-sandbox.itunes.apple.com", "buy.itunes.apple.com", "sandbox.itunes.apple.com",
    ]

    public let allowCustom: Bool
    let addresses: AddressPolicy

    public init(allowCustom: Bool, addresses: AddressPolicy) {
        self.allowCustom = allowCustom
        self.addresses = addresses
    }

    /// The URLs of a configuration: `serverAPI.baseURL` and `verifyReceiptURLs`, with their fields.
    static func urls(of config: AppConfiguration) -> [(field: String, url: String)] {
        var urls: [(String, String)] = []
        if let base = config.serverAPI?.baseURL { urls.append(("serverAPI.baseURL", base)) }
        for (index, url) in (config.verifyReceiptURLs ?? []).enumerated() { urls.append(("verifyReceiptURLs[\(index)]", url)) }
        return urls
    }

    /// Refuses a configuration whose URLs may not be called (`invalidInput` naming the field).
    public func validate(_ config: AppConfiguration) async throws(CoreError) {
        for (field, url) in Self.urls(of: config) { try await check(url, field: field) }
    }

    /// Refuses one URL: not Apple's (unless allowed), or an address the destinations' policy refuses.
    func check(_ url: String, field: String) async throws(CoreError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { throw .invalidInput(field: field, "'\(url)' is not an absolute URL") }
        guard components.user == nil, components.password == nil else {
            throw .invalidInput(field: field, "a URL with a user or password is not accepted")
        }
        if scheme == "https", Self.appleHosts.contains(host), components.port == nil || components.port == 443 { return }
        guard allowCustom else {
            throw .invalidInput(
                field: field,
                "calls with the app's credentials go to Apple only (https on \(Self.appleHosts.sorted().joined(separator: ", "))); set STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS=true to allow others (the simulator, tests)"
            )
        }
        do { try await addresses.check(url) } catch {
            throw .invalidInput(field: field, error.message)
        }
    }
}
