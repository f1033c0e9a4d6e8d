import Foundation

/// What the SDK keeps across launches, as small named blobs: the anonymous id, the cached customer info and catalog,
/// the queue of purchases to post, split-test groups and exposures.
public protocol KeyValueStorage: Sendable {
    /// The value kept under `key`, or nil.
    func data(forKey key: String) -> Data?
    /// Writes (or with nil, removes) a value; it is on disk when this returns.
    func set(_ data: Data?, forKey key: String) throws
}

/// One file per key in a directory, each written atomically (a crash leaves the old value or the new one, never half).
public struct FileStorage: KeyValueStorage {
    /// The folder the files are in (made on the first write).
    public let directory: URL

    /// Storage in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// `<Application Support>/Storekeeper`, or on Linux `$XDG_DATA_HOME` (or `~/.local/share`)`/storekeeper`.
    public static func standard() -> FileStorage {
        #if os(Linux)
            let base =
                ProcessInfo.processInfo.environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            return FileStorage(directory: base.appendingPathComponent("storekeeper"))
        #else
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            return FileStorage(directory: base.appendingPathComponent("Storekeeper"))
        #endif
    }

    private func url(_ key: String) -> URL {
        let safe = key.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
        return directory.appendingPathComponent(String(safe))
    }

    /// The file's contents, or nil when there is none (or it cannot be read).
    public func data(forKey key: String) -> Data? {
        try? Data(contentsOf: url(key))
    }

    /// Writes the file atomically, or removes it for nil.
    public func set(_ data: Data?, forKey key: String) throws {
        let file = url(key)
        guard let data else {
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
            return
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try data.write(to: file, options: .atomic)
    }
}

/// Keys the SDK writes.
enum StorageKeys {
    static let appUserId = "identity.appUserId"
    static let purchaseQueue = "purchases.queue"
    static let catalog = "catalog"
    static let definitions = "experiments.definitions"
    static func customerInfo(_ appUserId: String) -> String { "customer." + Base64URL.encode(Data(appUserId.utf8)) }
    static let splitTests = "splitTests"
}

/// Base64 with the URL-safe alphabet and no padding (JWS segments, file names).
enum Base64URL {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes byte by byte: Foundation's decoder wants the standard alphabet and padding, and rewriting the text
    /// into it first cost more than decoding.
    static func decode(_ text: Substring) -> Data? {
        var output = [UInt8]()
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return Data(output)
    }
}
