import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies and decodes PKCS#7 app receipts locally, with no call to Apple.
///
/// Checks: the size bound; the CMS SignedData structure (BER, as receipts use indefinite lengths); the signer's
/// RSA signature over the receipt (SHA-256 through WWDR G5, or the legacy SHA-1 chain); the chain to a configured
/// root (Apple Inc. Root by default) under RFC 5280 at the validation time (the receipt's creation date by
/// default); then the bundle id and environment, and optionally the device hash.
public struct ReceiptVerifier: Sendable {
    public struct Configuration: Sendable {
        /// The trust anchors, DER. Apple Inc. Root by default; Xcode receipts need the StoreKit test certificate.
        public var rootCertificates: [[UInt8]]
        public var bundleId: String?
        public var environment: Environment?
        /// `.signedDate` means the receipt's creation date (field 12).
        public var validationTime: SignedDataVerifier.ValidationTime
        /// Inputs larger than this (as given, base64 or DER) are rejected before any parsing.
        public var maxInputBytes: Int
        /// The most in-app entries accepted in one receipt.
        public var maxInAppEntries: Int
        public var clock: @Sendable () -> Date

        public init(
            rootCertificates: [[UInt8]] = AppleRootCertificates.receipts,
            bundleId: String? = nil,
            environment: Environment? = nil,
            validationTime: SignedDataVerifier.ValidationTime = .signedDate,
            maxInputBytes: Int = 16 * 1024 * 1024,
            maxInAppEntries: Int = 100_000,
            clock: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.rootCertificates = rootCertificates
            self.bundleId = bundleId
            self.environment = environment
            self.validationTime = validationTime
            self.maxInputBytes = maxInputBytes
            self.maxInAppEntries = maxInAppEntries
            self.clock = clock
        }
    }

    public let configuration: Configuration
    private let trustStore: CertificateStore

    public init(_ configuration: Configuration = Configuration()) throws(SignedDataVerifier.ConfigurationError) {
        let roots = try TrustRoots.parse(configuration.rootCertificates)
        self.configuration = configuration
        self.trustStore = CertificateStore(roots)
    }

    /// Verifies a receipt given as base64 text or DER bytes. With `deviceIdentifier` (the app's
    /// identifierForVendor), also checks that the receipt was issued to that device.
    public func verify(_ input: [UInt8], deviceIdentifier: UUID? = nil) async throws(VerificationError) -> AppReceipt {
        guard input.count <= configuration.maxInputBytes else {
            throw .receiptFormat("the receipt is \(input.count) bytes, over the limit of \(configuration.maxInputBytes)")
        }
        let der = try Self.der(from: input)
        let signedData: PKCS7SignedData
        do {
            signedData = try PKCS7SignedData(ber: der)
        } catch let error as PKCS7SignedData.Malformed {
            throw .receiptFormat("the receipt is not a PKCS#7 signed receipt: \(error.reason)")
        } catch {
            throw .receiptFormat("the receipt is not valid BER: \(error)")
        }
        guard let signer = signedData.signerCertificate else {
            throw .certificate("the receipt does not carry the certificate that signed it")
        }
        guard let algorithm = signedData.signatureAlgorithm else {
            throw .failure("the receipt's signature algorithm is not RSA with SHA-1 or SHA-256")
        }
        try Self.checkSignature(signedData, signer: signer, algorithm: algorithm)

        // The payload is parsed only once its signature is known to be good.
        let receipt = try ReceiptPayload.decode(signedData.content, maxInAppEntries: configuration.maxInAppEntries)
        try await checkChain(
            signer: signer, intermediates: signedData.certificates,
            at: configuration.validationTime.date(signed: receipt.receiptCreationDate, clock: configuration.clock))
        if let expected = configuration.bundleId, receipt.bundleId != expected {
            throw .appIdentifier("the receipt is for bundle id \(receipt.bundleId ?? "(none)"), not \(expected)")
        }
        if let expected = configuration.environment, receipt.environment != expected {
            throw .environment("the receipt is from \(receipt.receiptType ?? "no environment"), not \(expected.rawValue)")
        }
        if let deviceIdentifier {
            try Self.checkDevice(receipt, deviceIdentifier: deviceIdentifier)
        }
        return receipt
    }

    /// SHA-1(device identifier ‖ opaque value ‖ bundle id field DER) must equal the receipt's hash (field 5).
    static func checkDevice(_ receipt: AppReceipt, deviceIdentifier: UUID) throws(VerificationError) {
        guard let opaque = receipt.opaqueValue, let bundle = receipt.bundleIdDER, let expected = receipt.sha1Hash else {
            throw .deviceMismatch("the receipt lacks the opaque value, bundle id or hash needed for the device check")
        }
        let uuid = deviceIdentifier.uuid
        let deviceBytes = withUnsafeBytes(of: uuid) { Array($0) }
        var hasher = Insecure.SHA1()
        hasher.update(data: deviceBytes)
        hasher.update(data: opaque)
        hasher.update(data: bundle)
        guard Array(hasher.finalize()) == expected else {
            throw .deviceMismatch("the receipt was not issued to device \(deviceIdentifier.uuidString)")
        }
    }

    static func der(from input: [UInt8]) throws(VerificationError) -> [UInt8] {
        // DER/BER of a SEQUENCE starts with 0x30; anything else is taken as base64 text, white space allowed.
        if input.first == 0x30 { return input }
        let text = input.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard !text.isEmpty, let der = Base64.decode(text, alphabet: .standard) else {
            throw .receiptFormat("the receipt is neither DER nor standard base64")
        }
        guard der.first == 0x30 else { throw .receiptFormat("the receipt is not a PKCS#7 structure") }
        return der
    }

    private static func checkSignature(
        _ signedData: PKCS7SignedData, signer: Certificate, algorithm: Certificate.SignatureAlgorithm
    ) throws(VerificationError) {
        let signedBytes: [UInt8]
        if let attributes = signedData.signer.signedAttributesDER {
            let digest: [UInt8] =
                algorithm == .sha256WithRSAEncryption
                ? Array(SHA256.hash(data: signedData.content)) : Array(Insecure.SHA1.hash(data: signedData.content))
            guard signedData.signer.messageDigest == digest else {
                throw .failure("the receipt's content does not match its signed message digest")
            }
            signedBytes = attributes
        } else {
            signedBytes = signedData.content
        }
        guard signer.publicKey.isValidSignature(signedData.signer.signature, for: signedBytes, signatureAlgorithm: algorithm) else {
            throw .failure("the receipt's signature does not match its content")
        }
    }

    private func checkChain(signer: Certificate, intermediates: [Certificate], at time: Date) async throws(VerificationError) {
        var verifier = Verifier(rootCertificates: trustStore) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            ReceiptSignerUsagePolicy()
        }
        let result = await verifier.validate(leaf: signer, intermediates: CertificateStore(intermediates))
        guard case .couldNotValidate(let failures) = result else { return }
        throw TrustRoots.chainFailure(failures, at: time, subject: "the receipt's certificate chain")
    }
}

/// Xcode's StoreKit test certificate marks its Extended Key Usage (code signing) critical, which a verifier must
/// understand or reject. What a receipt signer may sign is decided by the trust anchors configured here (Apple's
/// receipt root, or a StoreKit test certificate given on purpose), so the policy requires only that the extension
/// is well formed.
struct ReceiptSignerUsagePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for certificate in chain {
            do {
                _ = try certificate.extensions.extendedKeyUsage
            } catch {
                return .failsToMeetPolicy(reason: "a receipt certificate has a malformed extended key usage")
            }
        }
        return .meetsPolicy
    }
}
