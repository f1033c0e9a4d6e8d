import Foundation
import X509

/// What the JWS and the receipt verifiers share about trust anchors, validation time and chain failures.
enum TrustRoots {
    /// Parses configured DER roots, naming the first one that is not a certificate.
    static func parse(_ ders: [[UInt8]]) throws(SignedDataVerifier.ConfigurationError) -> [Certificate] {
        guard !ders.isEmpty else {
            throw SignedDataVerifier.ConfigurationError(message: "at least one trusted root certificate is required")
        }
        var roots: [Certificate] = []
        for (index, der) in ders.enumerated() {
            do {
                roots.append(try Certificate(derEncoded: der))
            } catch {
                throw SignedDataVerifier.ConfigurationError(message: "trusted root #\(index + 1) is not a DER X.509 certificate")
            }
        }
        return roots
    }

    /// The `verificationFailure` for a chain swift-certificates could not validate, with its distinct reasons.
    static func chainFailure(
        _ failures: [CertificateValidationResult.PolicyFailure], at time: Date, subject: String
    ) -> VerificationError {
        var reasons: [String] = []
        for failure in failures where !reasons.contains(failure.policyFailureReason.description) {
            reasons.append(failure.policyFailureReason.description)
        }
        if reasons.isEmpty {
            return .failure("\(subject) does not lead to a configured trusted root")
        }
        return .failure("\(subject) is not valid at \(Timestamp(time)) ms: \(reasons.joined(separator: "; "))")
    }
}

extension SignedDataVerifier.ValidationTime {
    /// The instant to check certificates at, given the data's own signing (or creation) date.
    func date(signed: Timestamp?, clock: () -> Date) -> Date {
        switch self {
        case .signedDate: signed?.date ?? clock()
        case .now: clock()
        case .fixed(let date): date
        }
    }
}
