import Hummingbird
import Storage

/// Which keys an endpoint takes.
enum Access {
    /// Customer endpoints: the app's public (SDK) key or a secret key.
    case customer
    /// Admin endpoints: a secret key only.
    case admin
}

extension AppRegistry {
    /// The app a request acts for. A public key on an admin endpoint is 403; a key of another app on an app's path
    /// is 404, as if the app did not exist.
    func authorize(_ request: Request, _ access: Access, appId: String? = nil) async throws -> AppRuntime {
        try await authorizeWithKind(request, access, appId: appId).app
    }

    /// The app and the kind of key the request came with (some customer endpoints allow more to a secret key).
    func authorizeWithKind(_ request: Request, _ access: Access, appId: String? = nil) async throws -> (app: AppRuntime, kind: APIKeyRecord.Kind) {
        let principal = try await authenticate(request.headers[.authorization])
        if access == .admin, principal.kind != .secret {
            throw APIError.forbidden("this endpoint needs a secret key (sk_…); public keys are for the customer endpoints")
        }
        if let appId, appId != principal.appId {
            throw APIError.notFound("no app \(appId)")
        }
        return (try await app(id: principal.appId), principal.kind)
    }
}
