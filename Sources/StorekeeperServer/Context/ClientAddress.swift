import HTTPTypes
import Hummingbird
import NIOCore
import StorekeeperCore

/// The proxies whose `X-Forwarded-For` is believed (`STOREKEEPER_TRUSTED_PROXIES`: addresses, comma-separated), and
/// the client address of a request: the connection's peer, or, when the peer is a trusted proxy, the right-most
/// `X-Forwarded-For` entry that is not one (entries further left were written by whoever the proxy heard from, and
/// anyone can write those). Without trusted proxies the header is ignored.
public struct TrustedProxies: Sendable, Equatable {
    public private(set) var addresses: Set<String>

    public static let none = TrustedProxies(addresses: [])

    /// Parses `10.0.0.1, ::1`; an entry that is not an IP address is refused.
    public init(parsing text: String) throws(SettingError) {
        var addresses: Set<String> = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let address = Self.canonical(entry) else {
                throw SettingError(key: ServerSettings.Key.trustedProxies, "'\(entry)' is not an IP address")
            }
            addresses.insert(address)
        }
        self.addresses = addresses
    }

    private init(addresses: Set<String>) { self.addresses = addresses }

    /// The client of a request whose connection came from `peer` (nil: unknown, as in-process tests).
    public func client(peer: String?, forwardedFor: [String]) -> String {
        guard let peer = peer.map({ Self.canonical($0) ?? $0 }) else { return "unknown" }
        guard addresses.contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            client = Self.canonical(hop) ?? String(hop.prefix(64))
            if !addresses.contains(client) { break }
        }
        return client
    }

    /// An IP address as `SocketAddress` writes it, IPv4-mapped IPv6 as IPv4; nil when it is not one.
    static func canonical(_ text: String) -> String? {
        guard let address = try? SocketAddress(ipAddress: text, port: 0), let ip = address.ipAddress else { return nil }
        if ip.hasPrefix("::ffff:"), ip.contains(".") { return String(ip.dropFirst("::ffff:".count)) }
        return ip
    }
}

extension HTTPFields {
    /// Every `X-Forwarded-For` value, in order.
    var forwardedFor: [String] { filter { $0.name.canonicalName == "x-forwarded-for" }.map(\.value) }
}

/// Sets `ServerContext.client` for everything after it.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let trustedProxies: TrustedProxies

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.client = trustedProxies.client(peer: context.remoteAddress, forwardedFor: request.headers.forwardedFor)
        return try await next(request, context)
    }
}
