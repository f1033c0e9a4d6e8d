import Foundation

/// What went wrong, for programs (the case) and for people (`message`).
public enum StorekeeperError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, or did not answer in time.
    case network(String)
    /// The server answered an error: its HTTP status, its stable `code`, its message, and whether the same request
    /// can never succeed (`permanent`: the server refused the input itself).
    case server(status: Int, code: String, message: String, permanent: Bool)
    /// The server asked to wait (429 or 503 with `Retry-After`): for this many seconds.
    case throttled(retryAfter: Int, message: String)
    /// The API key is not one the server knows, or not allowed to do this.
    case invalidKey(String)
    /// The purchase belongs to another customer and the app keeps purchases where they are (the `keep` policy).
    case conflict(String)
    /// The store (StoreKit, or the simulator) failed, or the user cancelled.
    case store(String)
    /// The user cancelled the purchase.
    case purchaseCancelled
    /// The purchase waits for approval (Ask to Buy); its transaction arrives later and is posted then.
    case purchasePending
    /// The promotional offer could not be applied (a signature that is not base64, a timestamp this device cannot
    /// pass, an offer StoreKit refused): nothing was bought, so the customer is never charged more than they were shown.
    case invalidOffer(String)
    /// The answer's signature did not verify, in `enforced` verification mode: something between the app and the
    /// server changed or replayed it, or it is not the configured server. The cached answer is kept.
    case verificationFailed(String)
    /// Nothing is known: the server cannot be reached and nothing was cached to answer from.
    case unavailable(String)

    /// The error in plain words, for a log or an alert.
    public var message: String {
        switch self {
        case .network(let message): "The server could not be reached: \(message)"
        case .server(let status, let code, let message, _): "The server answered \(status) \(code): \(message)"
        case .throttled(let seconds, let message): "The server asked to wait \(seconds) s: \(message)"
        case .invalidKey(let message): "The API key was refused: \(message)"
        case .conflict(let message): "The purchase belongs to another account: \(message)"
        case .store(let message): "The App Store failed: \(message)"
        case .purchaseCancelled: "The purchase was cancelled."
        case .purchasePending: "The purchase is waiting for approval."
        case .invalidOffer(let message): "The offer could not be applied, and nothing was bought: \(message)"
        case .verificationFailed(let message): "The server's answer failed verification: \(message)"
        case .unavailable(let message): message
        }
    }

    /// The same as `message`.
    public var description: String { message }

    /// Whether trying again later can help: network failures, rate limits and server errors.
    var isRetryable: Bool {
        switch self {
        case .network, .throttled: true
        case .server(let status, _, _, let permanent): !permanent && (status == 429 || status == 408 || status >= 500)
        case .invalidKey, .conflict, .store, .unavailable, .purchaseCancelled, .purchasePending, .invalidOffer,
            .verificationFailed:
            false
        }
    }

    /// A success whose body is not what the SDK reads: a server newer than the app (a value this SDK does not know),
    /// or something between them answering in the server's place (a captive portal's page).
    var isUnreadableAnswer: Bool {
        if case .server(let status, let code, _, _) = self { return (200..<300).contains(status) && code == APIClient.unreadableAnswer }
        return false
    }

    /// How long the server asked to wait, when it did.
    var retryAfter: Duration? {
        if case .throttled(let seconds, _) = self { return .seconds(seconds) }
        return nil
    }

    /// Whether the server refused the request for good: resending the same purchase can never succeed.
    var isPermanent: Bool {
        switch self {
        case .server(_, _, _, let permanent): permanent
        case .conflict: true
        default: false
        }
    }
}
