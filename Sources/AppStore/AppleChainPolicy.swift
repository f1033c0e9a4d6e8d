import SwiftASN1
import X509

/// The shape Apple gives every StoreKit signing chain: leaf, intermediate and root, with Apple's marker extensions
/// on the first two. Checked inside swift-certificates' verifier, next to RFC 5280.
struct AppleChainPolicy: VerifierPolicy {
    /// Present on the App Store's receipt-signing leaf certificates.
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Present on Apple's WWDR intermediate certificates.
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// Both markers are enforced here, so a certificate that marks them critical is still understood.
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.leafMarker, Self.intermediateMarker]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        Self.evaluate(Array(chain))
    }

    static func evaluate(_ chain: [Certificate]) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(
                reason: "the chain to the trusted root has \(chain.count) certificates, not leaf, intermediate and root")
        }
        guard chain[0].extensions[oid: leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}
