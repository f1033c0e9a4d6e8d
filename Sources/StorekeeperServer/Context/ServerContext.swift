import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// The request context of every route: Hummingbird's, and the caller once an API key authenticated it.
public struct ServerContext: AuthRequestContext, APIRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who the API key belongs to; nil until `APIKeyAuthenticator` has run (or when no key came).
    public var identity: Caller?
    /// The connection's peer (nil in in-process tests).
    public let remoteAddress: String?
    /// The client's address: the peer, or behind a trusted proxy the one it names (`ClientAddressMiddleware`); what
    /// per-client limits count by.
    public var client = "unknown"

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        identity = nil
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    /// The authenticated caller, or 401.
    func caller() throws -> Caller {
        guard let identity else {
            throw CoreError.unauthenticated("an API key is required: Authorization: Bearer <key>")
        }
        return identity
    }
}
