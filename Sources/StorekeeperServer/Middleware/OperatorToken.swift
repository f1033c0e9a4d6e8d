import HTTPTypes
import StorekeeperCore

/// The operator's credential over HTTP (`STOREKEEPER_OPERATOR_TOKEN`, at least 32 characters): what changes data every
/// app shares (`PUT /v1/rates`) and, when set, what reads the server's own internals (`/metrics`, `/openapi.yaml`).
/// Kept as its SHA-256 and compared in constant time, as API keys are. Unset, nothing is admitted with it (and the
/// internals stay open, as before).
public struct OperatorToken: Sendable {
    private let digest: String?

    public static let none = OperatorToken(digest: nil)
    public static let minimumLength = 32

    private init(digest: String?) { self.digest = digest }

    public init(_ token: String) throws(SettingError) {
        guard token.count >= Self.minimumLength, !token.contains(where: \.isWhitespace) else {
            throw SettingError(
                key: ServerSettings.Key.operatorToken, "at least \(Self.minimumLength) characters without spaces (openssl rand -hex 32)")
        }
        digest = APIKeys.hash(token)
    }

    public var isSet: Bool { digest != nil }

    /// Whether the request's `Authorization: Bearer …` is the operator token.
    func admits(_ headers: HTTPFields) -> Bool {
        guard let digest, let authorization = headers[.authorization] else { return false }
        return APIKeys.constantTimeEqual(APIKeys.hash(APIKeyAuthenticator.credential(authorization)), digest)
    }
}
