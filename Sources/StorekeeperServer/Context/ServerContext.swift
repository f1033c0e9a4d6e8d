import Foundation
import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// The request context of every route: Hummingbird's, with the 256 KB body limit, JSON bodies decoded and encoded
/// the API's way, and the caller once an API key authenticated it.
public struct ServerContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who the API key belongs to; nil until `APIKeyAuthenticator` has run (or when no key came).
    public var identity: Caller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        identity = nil
    }

    public var maxUploadSize: Int { ErrorResponse.maxBodyBytes }
    public var requestDecoder: JSONBodyDecoder { JSONBodyDecoder() }
    public var responseEncoder: JSONEncoder { .sortedKeys }
}

/// The context of the customer endpoints: any key of an app (the public key ships in the app).
public struct CustomerContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let caller: Caller

    public init(context: ServerContext) throws {
        coreContext = context.coreContext
        caller = try context.caller()
    }

    public var maxUploadSize: Int { ErrorResponse.maxBodyBytes }
    public var requestDecoder: JSONBodyDecoder { JSONBodyDecoder() }
    public var responseEncoder: JSONEncoder { .sortedKeys }
}

/// The context of the admin endpoints: a secret key only; on an app's path (`/v1/apps/{appId}/…`), a key of that
/// app (another app's key is answered as if the app did not exist).
public struct AdminContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let caller: Caller
    public var app: AppRuntime { caller.app }

    public init(context: ServerContext) throws {
        coreContext = context.coreContext
        let caller = try context.caller()
        guard caller.keyKind == .secret else {
            throw StorekeeperError.forbidden("this endpoint needs a secret key (sk_…); public keys are for the customer endpoints")
        }
        if let appId = context.parameters.get("appId"), appId != caller.app.id {
            throw StorekeeperError.appNotFound(appId: appId)
        }
        self.caller = caller
    }

    public var maxUploadSize: Int { ErrorResponse.maxBodyBytes }
    public var requestDecoder: JSONBodyDecoder { JSONBodyDecoder() }
    public var responseEncoder: JSONEncoder { .sortedKeys }
}

extension ServerContext {
    /// The authenticated caller, or 401.
    func caller() throws -> Caller {
        guard let identity else {
            throw StorekeeperError.unauthenticated("an API key is required: Authorization: Bearer <key>")
        }
        return identity
    }
}
