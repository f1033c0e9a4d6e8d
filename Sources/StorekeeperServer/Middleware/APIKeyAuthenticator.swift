import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// Authenticates the bearer key of a request (`Authorization: Bearer pk_…` or `sk_…`; the scheme is matched without
/// regard to case, as RFC 9110 §11.1 says, and the bare key is accepted too). No key leaves the context without a caller (the route's context then answers 401); a key that is not valid
/// is 401 at once.
struct APIKeyAuthenticator: AuthenticatorMiddleware {
    typealias Context = ServerContext
    let apps: AppRegistry

    func authenticate(request: Request, context: ServerContext) async throws -> Caller? {
        guard let authorization = request.headers[.authorization] else { return nil }
        return try await apps.authenticate(bearer: Self.credential(authorization))
    }

    /// The key in an `Authorization` value: after a `Bearer` scheme in any case and one or more spaces, or the value
    /// itself when it names no scheme.
    static func credential(_ authorization: String) -> String {
        let scheme = "bearer"
        guard authorization.utf8.count > scheme.utf8.count,
            authorization.prefix(scheme.count).lowercased() == scheme,
            authorization.dropFirst(scheme.count).first == " "
        else { return authorization }
        return String(authorization.dropFirst(scheme.count).drop { $0 == " " })
    }
}
