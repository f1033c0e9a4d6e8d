import AppStoreModels
import Foundation

/// A total order on facts that depends only on their content, so that merging versions and breaking ties gives the
/// same answer whatever order the facts came in.
enum Canonical {
    /// Older first: by signing date, then (transactions) an unrevoked version before a revoked one, so that at equal
    /// dates the revocation wins, then a shorter expiry before a longer one, then the bytes of the canonical JSON.
    static func precedes(_ a: JWSTransactionDecodedPayload, _ b: JWSTransactionDecodedPayload) -> Bool {
        let left = a.signedDate?.millisecondsSince1970 ?? .min
        let right = b.signedDate?.millisecondsSince1970 ?? .min
        if left != right { return left < right }
        if (a.revocationDate == nil) != (b.revocationDate == nil) { return a.revocationDate == nil }
        let leftExpiry = a.expiresDate?.millisecondsSince1970 ?? .min
        let rightExpiry = b.expiresDate?.millisecondsSince1970 ?? .min
        if leftExpiry != rightExpiry { return leftExpiry < rightExpiry }
        return a != b && bytes(a).lexicographicallyPrecedes(bytes(b))
    }

    static func precedes(_ a: JWSRenewalInfoDecodedPayload, _ b: JWSRenewalInfoDecodedPayload) -> Bool {
        let left = a.signedDate?.millisecondsSince1970 ?? .min
        let right = b.signedDate?.millisecondsSince1970 ?? .min
        if left != right { return left < right }
        return a != b && bytes(a).lexicographicallyPrecedes(bytes(b))
    }

    static func precedes(_ a: NotificationFact, _ b: NotificationFact) -> Bool {
        if a.signedDate != b.signedDate { return a.signedDate < b.signedDate }
        if a.notificationUUID != b.notificationUUID { return a.notificationUUID < b.notificationUUID }
        return a != b && bytes(a).lexicographicallyPrecedes(bytes(b))
    }

    private static func bytes(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map(Array.init) ?? []
    }
}
