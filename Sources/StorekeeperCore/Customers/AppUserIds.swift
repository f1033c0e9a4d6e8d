import Storage

/// The names apps give their customers (app user ids), and the names the server reserves.
public enum AppUserIds {
    /// The prefix of the app's own anonymous ids (one per install, before the user signs in). Only such an id can be
    /// aliased with the public key: any other merge needs a secret key, or anyone holding the app's public key (it
    /// ships in the app) could merge a stranger's purchases, or a name the stranger will use, into their own account.
    public static let devicePrefix = "$device:"

    /// The prefix of the names the server gives customers it cannot name: `$anonymous:<originalTransactionId>`.
    public static let anonymousPrefix = "$anonymous:"

    /// The longest app user id, in Unicode scalars (what JSON Schema's `maxLength` counts).
    public static let maxLength = 256

    /// The name of the customer who owns an original transaction that arrived without an appAccountToken.
    static func anonymous(originalTransactionId: String) -> String { anonymousPrefix + originalTransactionId }

    /// What no app user id contains: NUL (PostgreSQL's text cannot hold it) and the characters that end a line
    /// (`Character.isNewline`).
    public static let refusedScalars: [Unicode.Scalar] = ["\0", "\n", "\u{0B}", "\u{0C}", "\r", "\u{85}", "\u{2028}", "\u{2029}"]

    /// An app user id as the API takes it: 1 to 256 Unicode scalars on one line, without NUL. Names the app posts to
    /// (creating the customer) cannot start with `$`, but for the app's own `$device:` ids. `field` names the input in
    /// the error.
    public static func validate(_ id: String, posting: Bool = false, field: String = "appUserId") throws(CoreError) -> String {
        guard !id.isEmpty, id.unicodeScalars.count <= maxLength, !id.unicodeScalars.contains(where: refusedScalars.contains) else {
            throw .invalidInput(field: field, "\(field) is 1 to \(maxLength) characters on one line, without NUL")
        }
        if posting, id.hasPrefix("$"), !id.hasPrefix(devicePrefix) {
            throw .invalidInput(
                field: field,
                "app user ids starting with $ are reserved (except \(devicePrefix)…, the app's anonymous ids)")
        }
        return id
    }

    /// Customers the server named itself are read with a secret key only: original transaction ids are not secrets.
    static func checkReadable(_ id: String, by keyKind: APIKeyRecord.Kind) throws(CoreError) {
        if keyKind != .secret, id.hasPrefix(anonymousPrefix) {
            throw .forbidden("customers the server named itself are read with a secret key")
        }
    }
}
