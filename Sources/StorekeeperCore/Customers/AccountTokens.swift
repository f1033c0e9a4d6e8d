import Crypto
import Foundation
import NIOConcurrencyHelpers
import Storage

/// The appAccountToken of an app user id: the UUID the SDK passes to StoreKit's purchase option, which Apple puts in
/// every transaction and notification of the purchase, so that a notification finds its customer even when the app
/// user id is not a UUID and the app has not posted the purchase yet.
///
/// An app user id that is a UUID is its own token (the rule notifications always followed). Any other gets a UUID
/// derived from the app and the app user id (SHA-256, the version nibble set to 8, RFC 9562's custom version), which
/// the server registers when it first answers it, so that the token can be resolved back.
public final class AccountTokens: Sendable {
    let database: StorageDatabase
    let clock: @Sendable () -> Date
    /// Tokens registered by this process, so that reads write at most once per app user id; bounded.
    private let registered = NIOLockedValueBox<Set<String>>([])
    private static let memoryLimit = 100_000

    init(database: StorageDatabase, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.clock = clock
    }

    /// The token of `appUserId` in `appId`: lower-case UUID text.
    public static func token(app appId: String, appUserId: String) -> String {
        if let uuid = UUID(uuidString: appUserId) { return uuid.uuidString.lowercased() }
        var bytes = Array(SHA256.hash(data: Data("storekeeper.appAccountToken\u{0}\(appId)\u{0}\(appUserId)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
                bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }

    /// The token of `appUserId`, registered so that notifications carrying it resolve to `appUserId`.
    public func token(for appUserId: String, app appId: String) async throws -> String {
        let token = Self.token(app: appId, appUserId: appUserId)
        guard token != appUserId.lowercased() else { return token }
        let key = appId + "\u{0}" + token
        guard !registered.withLockedValue({ $0.contains(key) }) else { return token }
        let now = clock().millisecondsSince1970
        try await database.writing { try await $0.registerAccountToken(app: appId, token: token, appUserId: appUserId, at: now) }
        registered.withLockedValue {
            if $0.count >= Self.memoryLimit { $0.removeAll(keepingCapacity: true) }
            $0.insert(key)
        }
        return token
    }
}
