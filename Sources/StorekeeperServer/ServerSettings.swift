import Configuration
import StorekeeperCore

/// The server's settings: where it listens, and the domain's settings. Read once from a swift-configuration reader
/// (arguments, then `STOREKEEPER_*` variables, then the defaults written here and in `CoreSettings`).
public struct ServerSettings: Sendable {
    public enum Key {
        public static let host = "storekeeper.host"
        public static let port = "storekeeper.port"
        public static let secureCookies = "storekeeper.secure.cookies"
        public static let trustedProxies = "storekeeper.trusted.proxies"
        public static let operatorToken = "storekeeper.operator.token"
        public static let headerTimeout = "storekeeper.header.timeout"
        public static let bodyTimeout = "storekeeper.body.timeout"
        public static let idleTimeout = "storekeeper.idle.timeout"
        public static let maxConnections = "storekeeper.max.connections"
    }

    public var host = "127.0.0.1"
    /// 0 picks a free port.
    public var port = 8080
    /// The dashboard's session cookie is `Secure` (sent over HTTPS only): turn on behind a TLS proxy.
    public var secureCookies = false
    /// The proxies (addresses) whose `X-Forwarded-For` names the client, for the sign-in throttle; none by default.
    public var trustedProxies = TrustedProxies.none
    /// The operator's token over HTTP: `PUT /v1/rates`, and `/metrics` and `/openapi.yaml` once set.
    public var operatorToken = OperatorToken.none
    /// Timeouts and the connection cap (`ConnectionLimits`).
    public var connections = ConnectionLimits()
    public var core = CoreSettings()

    /// The defaults.
    public init() {}

    /// Reads every setting, refusing a value that does not parse.
    public init(reader: ConfigReader) throws(SettingError) {
        core = try CoreSettings(reader: reader)
        if let host = reader.string(forKey: ConfigKey(Key.host)) { self.host = host }
        if let text = reader.string(forKey: ConfigKey(Key.port)) {
            guard let port = Int(text), (0...65535).contains(port) else {
                throw SettingError(key: Key.port, "the port must be 0 to 65535, not \(text)")
            }
            self.port = port
        }
        secureCookies = try CoreSettings.flag(reader, Key.secureCookies, default: secureCookies)
        if let text = reader.string(forKey: ConfigKey(Key.trustedProxies)) { trustedProxies = try TrustedProxies(parsing: text) }
        for (key, path) in [
            (Key.headerTimeout, \ConnectionLimits.headerTimeout), (Key.bodyTimeout, \.bodyTimeout), (Key.idleTimeout, \.idleTimeout),
        ] {
            guard let text = reader.string(forKey: ConfigKey(key)) else { continue }
            guard let seconds = Int(text), (1...3600).contains(seconds) else {
                throw SettingError(key: key, "1 to 3600 seconds, not '\(text)'")
            }
            connections[keyPath: path] = .seconds(seconds)
        }
        if let text = reader.string(forKey: ConfigKey(Key.maxConnections)) {
            guard let count = Int(text), count >= 0 else {
                throw SettingError(key: Key.maxConnections, "a number of connections, 0 for automatic")
            }
            guard count <= ConnectionLimits.automaticMaximum else {
                throw SettingError(
                    key: Key.maxConnections,
                    "\(count) is over what the open-file limit leaves room for (\(ConnectionLimits.automaticMaximum)): raise LimitNOFILE (ulimit -n) first"
                )
            }
            connections.maxConnections = count == 0 ? nil : count
        }
        if let token = reader.string(forKey: ConfigKey(Key.operatorToken), isSecret: true), !token.isEmpty {
            operatorToken = try OperatorToken(token)
        }
    }
}
