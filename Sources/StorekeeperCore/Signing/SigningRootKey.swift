import Crypto
import Foundation
import Storage

/// Where the root signing key's private half lives (README "Answers the device can trust"): `STOREKEEPER_SIGNING_KEY`
/// (base64 of the 32-byte Ed25519 private key) when set, else a file: `STOREKEEPER_SIGNING_KEY_FILE`, by default
/// `storekeeper-signing.key` beside the SQLite database (in the working directory for PostgreSQL), written with a new
/// key (readable by its owner only) the first time it is needed. Every server of one deployment must share it.
public enum SigningRootKey {
    /// The default file for a database.
    public static func defaultFile(for database: DatabaseLocation) -> String {
        guard case .sqlite(let path) = database else { return "storekeeper-signing.key" }
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "storekeeper-signing.key" : (folder as NSString).appendingPathComponent("storekeeper-signing.key")
    }

    /// The root key the settings name; a file that does not exist yet is made. A value or file that does not hold a
    /// key, or a file that cannot be read or written, is a `SettingError` naming the setting.
    public static func load(_ settings: CoreSettings) throws(SettingError) -> Curve25519.Signing.PrivateKey {
        if let value = settings.signingKey {
            return try parse(value, key: CoreSettings.Key.signingKey)
        }
        let path = settings.signingKeyFile ?? defaultFile(for: settings.database)
        let key = CoreSettings.Key.signingKeyFile
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw SettingError(key: key, "\(path) cannot be read")
            }
            return try parse(text, key: key)
        }
        let made = Curve25519.Signing.PrivateKey()
        let text = made.rawRepresentation.base64EncodedString() + "\n"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw SettingError(key: key, "\(path) cannot be written (set STOREKEEPER_SIGNING_KEY_FILE to a writable path)")
        }
        return made
    }

    static func parse(_ text: String, key: String) throws(SettingError) -> Curve25519.Signing.PrivateKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: trimmed), data.count == 32,
            let parsed = try? Curve25519.Signing.PrivateKey(rawRepresentation: data)
        else {
            throw SettingError(key: key, "not an Ed25519 private key (base64 of 32 bytes)")
        }
        return parsed
    }
}
