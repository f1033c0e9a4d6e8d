import AppStore
import Storage

/// Every way a use case of the domain can fail, knowing nothing of HTTP. The server maps each case to a status and a
/// stable code in one place (`StorekeeperServer/Errors/ErrorResponse.swift`); the command line prints `description`.
public enum CoreError: Error, Sendable, CustomStringConvertible {
    /// No app has this id (or the caller may not know that it exists).
    case appNotFound(appId: String)
    /// Something else the request names does not exist in the app (a customer, a transaction).
    case notFound(String)
    /// No key, or a key that is malformed, unknown or revoked: the same answer for each.
    case unauthenticated(String)
    /// The caller is known but may not do this.
    case forbidden(String)
    /// The input is not acceptable; `field` names the part at fault when there is one.
    case invalidInput(field: String?, String)
    /// The request contradicts what is stored (a variant that is not the customer's assignment, a status that cannot
    /// follow the current one, a key that is taken).
    case conflict(String)
    /// The original transaction belongs to another customer and the app's transfer policy keeps it there.
    case transactionOwned(originalTransactionId: String)
    /// Signed data that did not verify (see `VerificationError.isRetryable`).
    case verification(VerificationError)
    /// Apple refused what we sent on the app's behalf (verifyReceipt's status), or answered something unusable.
    case rejectedByApple(String)
    /// Apple did not answer, or answered that it cannot now: a retry can help.
    case appleUnavailable(String)
    /// Too many requests of this kind from this caller, or at once: nothing was done; try again after `retryAfter`
    /// seconds.
    case tooManyRequests(String, retryAfter: Int)
    /// The database failed (see `StorageError.Code`).
    case storage(StorageError)
    /// A bug or corrupt stored data: nothing the caller can fix.
    case internalError(String)

    /// Invalid input without a single field at fault.
    public static func invalidInput(_ message: String) -> CoreError { .invalidInput(field: nil, message) }

    public var description: String {
        switch self {
        case .appNotFound(let appId): "no app \(appId)"
        case .unauthenticated(let message), .forbidden(let message), .rejectedByApple(let message),
            .appleUnavailable(let message), .internalError(let message), .notFound(let message), .conflict(let message),
            .tooManyRequests(let message, _):
            message
        case .invalidInput(let field?, let message): "\(field): \(message)"
        case .invalidInput(nil, let message): message
        case .transactionOwned(let original):
            "original transaction \(original) belongs to another app user; this app's transfer policy is keep"
        case .verification(let error): error.message
        case .storage(let error): error.message
        }
    }
}
