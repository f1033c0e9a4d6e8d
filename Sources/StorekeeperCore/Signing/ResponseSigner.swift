import Crypto
import Foundation
import ResponseSigning
import Synchronization

/// Signs the customer API's answers (README "Answers the device can trust"): with an Ed25519 intermediate key made
/// here and replaced every `rotation`, whose public key and expiry the long-lived root key signs. Each server process
/// makes its own intermediates; the app trusts any of them through the root key it compiles in.
public final class ResponseSigner: Sendable {
    /// The root key's public half (32 bytes): what `storekeeper keys signing` prints and the app is configured with.
    public let rootPublicKey: [UInt8]
    /// How long one intermediate key signs before the next replaces it.
    public let rotation: Duration
    private let root: Curve25519.Signing.PrivateKey
    private let current = Mutex<Intermediate?>(nil)

    /// One intermediate key and the root's signature over it (`package`: tests look at the rotation).
    package struct Intermediate: Sendable {
        var key: Curve25519.Signing.PrivateKey
        package var publicKey: [UInt8]
        package var createdAt: Int64
        package var expiresAt: Int64
        var rootSignature: [UInt8]
    }

    /// A signer whose intermediates each sign for `rotation` (a day by default) and stay valid for twice that.
    public init(root: Curve25519.Signing.PrivateKey, rotation: Duration = .seconds(86_400)) {
        self.root = root
        self.rootPublicKey = Array(root.publicKey.rawRepresentation)
        self.rotation = rotation
    }

    /// The `X-Signature` value for `message`, made with the intermediate key current at its request time.
    public func sign(_ message: SignedMessage) throws -> String {
        let intermediate = try self.intermediate(at: message.requestTime)
        let signature = try intermediate.key.signature(for: message.bytes)
        return IntermediateKeySignature(
            publicKey: intermediate.publicKey, expiresAt: intermediate.expiresAt, rootSignature: intermediate.rootSignature,
            signature: Array(signature)
        ).headerValue
    }

    /// The intermediate key for `now`: the current one while it is younger than `rotation`, else a new one.
    package func intermediate(at now: Int64) throws -> Intermediate {
        let milliseconds = rotation.components.seconds * 1000
        if let current = current.withLock({ $0 }), now >= current.createdAt, now - current.createdAt < milliseconds {
            return current
        }
        let key = Curve25519.Signing.PrivateKey()
        let publicKey = Array(key.publicKey.rawRepresentation)
        let expiresAt = now + 2 * milliseconds
        let statement = IntermediateKeySignature.statement(publicKey: publicKey, expiresAt: expiresAt)
        let made = Intermediate(
            key: key, publicKey: publicKey, createdAt: now, expiresAt: expiresAt, rootSignature: Array(try root.signature(for: statement)))
        current.withLock { $0 = made }
        return made
    }
}
