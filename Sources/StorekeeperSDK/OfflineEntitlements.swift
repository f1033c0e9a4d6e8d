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
    static func payload(of jws: String) -> JWSTransactionDecodedPayload? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let json = Base64URL.decode(parts[1]) else { return nil }
        return try? decoder.decode(JWSTransactionDecodedPayload.self, from: json)
    }

    /// The latest instant the transactions prove: none was signed after the real now.
    static func latestSignedDate(_ payloads: [JWSTransactionDecodedPayload]) -> Int64? {
        payloads.compactMap { $0.signedDate?.millisecondsSince1970 }.max()
    }

    /// The engine's state of these transactions at `now` (server time, milliseconds).
    static func state(of payloads: [JWSTransactionDecodedPayload], catalog: Catalog, now: Int64) -> CustomerState {
        PreparedCustomer(catalog: catalog, facts: payloads.map(Fact.transaction)).state(at: Timestamp(millisecondsSince1970: now))
    }
}

extension Storekeeper {
    /// The entitlement engine's state of signed transactions at `now`, computed on the device as the SDK does when the
    /// server cannot be reached (the transactions are decoded, not verified). Transactions that do not decode are
    /// left out.
    public static func deviceState(of transactions: [StoreTransaction], catalog: Catalog, now: Date) -> CustomerState {
        OfflineEntitlements.state(
            of: transactions.compactMap { OfflineEntitlements.payload(of: $0.jwsRepresentation) }, catalog: catalog,
            now: Int64((now.timeIntervalSince1970 * 1000).rounded()))
    }
}

/// A catalog as fetched, with the server time it was fetched at (it is used for 25 hours).
struct CachedCatalog: Codable, Sendable {
    var catalog: Catalog
    var fetchedAt: Int64

    static let lifetime: Int64 = 25 * 3_600_000
}
