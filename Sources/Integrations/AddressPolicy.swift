import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Refuses destinations inside the server's own network (server-side request forgery): a URL whose host is, or
/// resolves to, a loopback, private, link-local, shared, multicast or otherwise reserved address, unless the operator
/// allows private destinations (`STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS`, for tests and internal receivers). Every
/// address a name resolves to must be public. Resolutions are remembered for a minute.
///
/// A name resolved here is resolved again by the HTTP client when it connects; a DNS server that answers
/// differently the second time (rebinding) is not caught.
public final class AddressPolicy: Sendable {
    public let allowPrivate: Bool
    private let resolved = NIOLockedValueBox([String: (addresses: [IPAddress], at: ContinuousClock.Instant)]())
    private static let remembered: Duration = .seconds(60)

    public init(allowPrivate: Bool) {
        self.allowPrivate = allowPrivate
    }

    /// The host of an absolute http or https URL, or nil when the text is not one (or has no host): what the server
    /// may send a request to at all.
    public static func httpHost(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty
        else { return nil }
        return host
    }

    /// Throws `forbiddenAddress` for a URL that must not be called, and `unresolvableAddress` for a host name that does
    /// not resolve now (a failure to retry; it is not remembered).
    public func check(_ url: String) async throws(IntegrationError) {
        guard let rawHost = Self.httpHost(of: url) else {
            throw IntegrationError(.forbiddenAddress, "not an http or https URL with a host")
        }
        if allowPrivate { return }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let addresses = try await resolve(host)
        if let inside = addresses.first(where: { !$0.isPublic }) {
            throw IntegrationError(
                .forbiddenAddress,
                "\(host) is \(inside), an internal address; set STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS=true to allow internal destinations")
        }
    }

    private func resolve(_ host: String) async throws(IntegrationError) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        let now = ContinuousClock.now
        if let cached = resolved.withLockedValue({ $0[host] }), now - cached.at < Self.remembered { return cached.addresses }
        let addresses = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Self.lookUp(host)) }
        }
        guard !addresses.isEmpty else { throw IntegrationError(.unresolvableAddress, "\(host) does not resolve (yet): retried") }
        resolved.withLockedValue { $0[host] = (addresses, now) }
        return addresses
    }

    /// getaddrinfo's addresses for a name (blocking).
    private static func lookUp(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        addresses.append(.v4(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)))
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        addresses.append(.v6(withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }))
                    }
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }
}

/// An IPv4 or IPv6 address, and whether it is public.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    case v6([UInt8])

    /// Parses a literal (`10.0.0.1`, `::1`), or nil.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: v6) { Array($0) })
            return
        }
        return nil
    }

    public var description: String {
        switch self {
        case .v4(let value): return [24, 16, 8, 0].map { String((value >> $0) & 0xff) }.joined(separator: ".")
        case .v6(let bytes):
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
    }

    /// Whether the address is on the public internet: not unspecified, loopback, private (RFC 1918, IPv6 unique
    /// local), shared (100.64/10), link-local, multicast, benchmarking, documentation or reserved. An IPv4 address
    /// inside IPv6 (mapped, compatible, NAT64) is judged as IPv4.
    public var isPublic: Bool {
        switch self {
        case .v4(let a):
            let internalRanges: [(UInt32, Int)] = [
                (0x0000_0000, 8), (0x0A00_0000, 8), (0x6440_0000, 10), (0x7F00_0000, 8), (0xA9FE_0000, 16), (0xAC10_0000, 12),
                (0xC000_0000, 24), (0xC000_0200, 24), (0xC0A8_0000, 16), (0xC612_0000, 15), (0xC633_6400, 24), (0xCB00_7100, 24),
                (0xE000_0000, 4), (0xF000_0000, 4),
            ]
            return !internalRanges.contains { base, bits in a >> (32 - bits) == base >> (32 - bits) }
        case .v6(let b):
            guard b.count == 16 else { return false }
            let embedded = UInt32(b[12]) << 24 | UInt32(b[13]) << 16 | UInt32(b[14]) << 8 | UInt32(b[15])
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return IPAddress.v4(embedded).isPublic }
            if b[0..<12].allSatisfy({ $0 == 0 }) { return embedded > 1 && IPAddress.v4(embedded).isPublic }
            if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b { return IPAddress.v4(embedded).isPublic }
            if b[0] & 0xfe == 0xfc { return false }  // fc00::/7 unique local
            if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false }  // fe80::/10 link-local
            if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return false }  // fec0::/10 site-local (deprecated)
            if b[0] == 0xff { return false }  // multicast
            if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return false }  // documentation
            return true
        }
    }
}
