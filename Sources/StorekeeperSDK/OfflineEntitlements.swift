import AppStoreModels
import Entitlements
import Foundation

/// The customer's entitlements computed on the device, from the signed transactions it holds, with the server's own
/// engine and the app's catalog: what the SDK answers when the server cannot be reached and nothing usable is cached.
///
/// The transactions are decoded, not verified: the device has no reason to forge its own purchases, and whatever it
/// computes is never cached nor sent anywhere; the server's verified answer replaces it as soon as one arrives.
enum OfflineEntitlements {
    static let decoder = JSONDecoder()

    /// The payload of a compact JWS, decoded.
    static func payload<Payload: Decodable>(of jws: String, as type: Payload.Type = JWSTransactionDecodedPayload.self) -> Payload? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let json = Base64URL.decode(parts[1]) else { return nil }
        return try? decoder.decode(Payload.self, from: json)
    }

    /// The latest instant the signed data proves: none of it was signed after the real now.
    static func latestSignedDate(_ payloads: [JWSTransactionDecodedPayload], _ renewals: [JWSRenewalInfoDecodedPayload] = []) -> Int64? {
        (payloads.compactMap { $0.signedDate?.millisecondsSince1970 } + renewals.compactMap { $0.signedDate?.millisecondsSince1970 }).max()
    }

    /// The engine's state of these transactions and renewal infos at `now` (server time, milliseconds).
    static func state(
        of payloads: [JWSTransactionDecodedPayload], renewals: [JWSRenewalInfoDecodedPayload] = [], catalog: Catalog, now: Int64
    ) -> CustomerState {
        PreparedCustomer(catalog: catalog, facts: payloads.map(Fact.transaction) + renewals.map(Fact.renewalInfo))
            .state(at: Timestamp(millisecondsSince1970: now))
    }
}

/// The device's entitlement computation, keeping each transaction's decoded payload: decoding (Foundation's JSON
/// decoder) costs several times what the engine does, and offline the same transactions are evaluated again at every
/// read. At most `limit` payloads are kept.
@_spi(Benchmarks) public final class DeviceEntitlements: Sendable {
    private let decoded = Locked<[String: JWSTransactionDecodedPayload]>([:])
    private let limit: Int

    /// A computation that keeps at most `limit` decoded payloads.
    public init(limit: Int = 2_000) {
        self.limit = limit
    }

    /// The payloads of the transactions that decode (the others are left out).
    func payloads(of transactions: [StoreTransaction]) -> [JWSTransactionDecodedPayload] {
        let known = decoded.current
        var fresh: [String: JWSTransactionDecodedPayload] = [:]
        let payloads = transactions.compactMap { transaction -> JWSTransactionDecodedPayload? in
            if let payload = known[transaction.jwsRepresentation] { return payload }
            guard let payload = OfflineEntitlements.payload(of: transaction.jwsRepresentation) else { return nil }
            fresh[transaction.jwsRepresentation] = payload
            return payload
        }
        if !fresh.isEmpty {
            decoded.withLock { cache in
                if cache.count + fresh.count > limit { cache.removeAll(keepingCapacity: true) }
                cache.merge(fresh) { old, _ in old }
            }
        }
        return payloads
    }

    /// The entitlement engine's state of signed transactions at `now`, as the SDK computes it when the server cannot
    /// be reached (the transactions are decoded, not verified).
    public func state(of transactions: [StoreTransaction], catalog: Catalog, now: Date) -> CustomerState {
        OfflineEntitlements.state(
            of: payloads(of: transactions), catalog: catalog, now: Int64((now.timeIntervalSince1970 * 1000).rounded()))
    }
}

/// A catalog as fetched, with the server time it was fetched at (it is used for 25 hours).
struct CachedCatalog: Codable, Sendable {
    var catalog: Catalog
    var fetchedAt: Int64

    static let lifetime: Int64 = 25 * 3_600_000
}
