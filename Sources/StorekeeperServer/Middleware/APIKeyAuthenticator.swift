import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// Authenticates the bearer key of a request (`Authorization: Bearer pk_…` or `sk_…`; the bare key is accepted
/// too). No key leaves the context without a caller (the route's context then answers 401); a key that is not valid
/// is 401 at once.
struct APIKeyAuthenticator: AuthenticatorMiddleware {
    typealias Context = ServerContext
    let apps: AppRegistry

    func authenticate(request: Request, context: ServerContext) async throws -> Caller? {
        guard let authorization = request.headers[.authorization] else { return nil }
        let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst("Bearer ".count)) : authorization
        return try await apps.authenticate(bearer: token)
    }
}
