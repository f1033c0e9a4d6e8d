import Foundation

extension Storekeeper {
    /// How the SDK reaches its server and where it keeps what must survive a relaunch.
    public struct Configuration: Sendable {
        /// The app's public key (`pk_…`).
        public var apiKey: String
        /// The Storekeeper server, e.g. `https://subscriptions.example.com`.
        public var baseURL: URL
        /// The signed-in user's id; nil: an anonymous `$device:<UUID>` id, kept across launches.
        public var appUserId: String?
        /// Where identity, cached customer info, the purchase queue and split-test groups are kept; nil: files in the
        /// application-support directory (Apple platforms put identity in the Keychain with `KeychainStorage`).
        public var storage: (any KeyValueStorage)?
        /// Where the app user id is kept, when not in `storage`: `KeychainStorage` on Apple platforms by default, so
        /// that the anonymous id outlives a reinstall.
        public var identityStorage: (any KeyValueStorage)?
        /// A catalog shipped with the app, for offline entitlements before the server's was ever fetched: the JSON the
        /// server answers at `GET /v1/apps/{appId}/catalog` (the catalog file given to `storekeeper apps create`), for
        /// example read from the app bundle. One that does not read is said in `log` and not used.
        public var bundledCatalog: Data?
        /// Cached customer info older than this is fetched again (in the foreground).
        public var staleAfter: Duration = .seconds(300)
        /// The first retry of a purchase post that failed for a reason that can pass (doubling up to `maxRetryDelay`).
        public var retryDelay: Duration = .seconds(1)
        /// The longest wait between two retries of a purchase post.
        public var maxRetryDelay: Duration = .seconds(300)
        /// How long one request may take.
        public var requestTimeout: Duration = .seconds(30)
        /// How the SDK sends its requests; nil: URLSession.
        public var transport: (any HTTPTransport)?
        /// Where time comes from: a monotonic clock for the server time's advance, the wall clock only for backoff.
        public var clock: SDKClock = .system
        /// The root public key the server signs with (`storekeeper keys signing` prints it, base64): with it, every
        /// answer's signature is checked (README "Answers the device can trust").
        public var signingKey: String?
        /// What a failed signature does: `informational` (the default) marks the answer `failed` and the app decides;
        /// `enforced` makes it an error and keeps the cached answer; `disabled` checks nothing.
        public var verification: VerificationMode = .informational
        /// Where the SDK's messages go (a group the split test's enum does not know, a purchase kept for a retry …).
        public var log: @Sendable (String) -> Void = { _ in }

        /// A configuration with the app's public key, the server, and optionally a signed-in user's id.
        public init(apiKey: String, baseURL: URL, appUserId: String? = nil) {
            self.apiKey = apiKey
            self.baseURL = baseURL
            self.appUserId = appUserId
        }
    }

    /// How the SDK treats the server's signatures.
    public enum VerificationMode: String, Sendable, Hashable {
        /// Nothing is checked: every answer is `notRequested`.
        case disabled
        /// Answers are checked when a `signingKey` is configured; one that fails is marked `failed` and still used.
        case informational
        /// Answers are checked; one that fails is the error `verificationFailed`, and the cached answer stays.
        case enforced
    }
}
