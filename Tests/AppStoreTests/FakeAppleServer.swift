import AppStore
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// What the fake server saw, for the tests to check.
final class RequestLog: Sendable {
    struct Entry: Sendable {
        var method: String
        var path: String
        var query: String
        var body: Data
        var claims: [String: String]
    }

    private let entries = Mutex<[Entry]>([])
    private let counters = Mutex<[String: Int]>([:])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    var all: [Entry] { entries.withLock { $0 } }
    var last: Entry? { all.last }

    /// Counts calls per key and returns the new count.
    func count(_ key: String) -> Int {
        counters.withLock {
            $0[key, default: 0] += 1
            return $0[key] ?? 0
        }
    }
}

enum FakeServer {
    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        json(try JSONSerialization.data(withJSONObject: object), status: status)
    }

    static func fixture(_ name: String, status: HTTPResponse.Status = .ok) throws -> Response {
        json(try Fixtures.data("payload-shapes/\(name).json"), status: status)
    }

    static func fixtureObject(_ name: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: try Fixtures.data("payload-shapes/\(name).json")) as? [String: Any] ?? [:]
    }

    /// Runs `body` against a live server on a loopback port chosen by the system.
    static func run(_ router: Router<BasicRequestContext>, _ body: @Sendable @escaping (String) async throws -> Void) async throws {
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            guard let port = client.port else { throw Fixtures.Missing(name: "the fake server's port") }
            try await body("http://127.0.0.1:\(port)")
        }
    }
}

/// Checks a bearer token the way the App Store Server API does: ES256 with the key's public key, `kid`, and the
/// claims `iss`, `iat`, `exp` (at most an hour after `iat`), `aud` `appstoreconnect-v1` and `bid`.
struct TokenCheck {
    var publicKey: P256.Signing.PublicKey
    var keyId: String
    var issuerId: String
    var bundleId: String

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    func check(_ authorization: String?) throws -> [String: String] {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw Refused(description: "no bearer token") }
        let parts = authorization.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = TestPKI.base64urlDecode(parts[0]), let payloadData = TestPKI.base64urlDecode(parts[1]),
            let signatureData = TestPKI.base64urlDecode(parts[2]),
            let header = try JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try JSONSerialization.jsonObject(with: payloadData) as? [String: Any]
        else { throw Refused(description: "not a JWT") }
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        guard publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else {
            throw Refused(description: "bad signature")
        }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyId else { throw Refused(description: "bad header") }
        guard claims["iss"] as? String == issuerId, claims["aud"] as? String == "appstoreconnect-v1", claims["bid"] as? String == bundleId,
            let iat = claims["iat"] as? Int, let exp = claims["exp"] as? Int, exp > iat, exp - iat <= 3600
        else { throw Refused(description: "bad claims \(claims)") }
        return claims.mapValues { "\($0)" }
    }
}
