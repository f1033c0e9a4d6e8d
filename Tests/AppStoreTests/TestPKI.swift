import AppStore
import Crypto
import Foundation
import SwiftASN1
import X509

/// A chain shaped like Apple's (root, intermediate with OID 1.2.840.113635.100.6.2.1, ES256 leaf with OID
/// 1.2.840.113635.100.6.11.1), made fresh for the tests so that every failure can be produced.
struct TestPKI {
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// 2023-01-01 and 2033-01-01: the default validity of every certificate.
    static let start = Date(timeIntervalSince1970: 1_672_531_200)
    static let end = Date(timeIntervalSince1970: 1_988_150_400)

    struct Options {
        var leafHasOID = true
        var intermediateHasOID = true
        var leafValidity: ClosedRange<Date> = TestPKI.start...TestPKI.end
        var intermediateValidity: ClosedRange<Date> = TestPKI.start...TestPKI.end
        var ocspURI: String? = nil
        var name = "Test"
    }

    let rootKey: P384.Signing.PrivateKey
    let root: Certificate
    let intermediateKey: P256.Signing.PrivateKey
    let intermediate: Certificate
    let leafKey: P256.Signing.PrivateKey
    let leaf: Certificate

    init(_ options: Options = Options()) throws {
        rootKey = P384.Signing.PrivateKey()
        intermediateKey = P256.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(options.name) Root CA") }
        let intermediateName = try DistinguishedName { CommonName("\(options.name) WWDR Intermediate") }
        let leafName = try DistinguishedName { CommonName("\(options.name) Store Signing Leaf") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: Self.start, notValidAfter: Self.end, issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: options.intermediateValidity.lowerBound, notValidAfter: options.intermediateValidity.upperBound,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
                if options.intermediateHasOID {
                    Certificate.Extension(oid: Self.intermediateOID, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: .init(rootKey))
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafValidity.lowerBound, notValidAfter: options.leafValidity.upperBound,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                if options.leafHasOID {
                    Certificate.Extension(oid: Self.leafOID, critical: false, value: [0x05, 0x00])
                }
                if let uri = options.ocspURI {
                    AuthorityInformationAccess([.init(method: .ocspServer, location: .uniformResourceIdentifier(uri))])
                }
            },
            issuerPrivateKey: .init(intermediateKey))
    }

    var rootDER: [UInt8] { Self.der(root) }
    var intermediateDER: [UInt8] { Self.der(intermediate) }
    var leafDER: [UInt8] { Self.der(leaf) }

    static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        // Serialising a certificate this code just built cannot fail.
        try? serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The standard x5c: leaf, intermediate, root.
    var x5c: [String] { [leafDER, intermediateDER, rootDER].map { Data($0).base64EncodedString() } }

    /// A compact JWS of `payload`, signed by the leaf key unless another key is given.
    func sign(
        _ payload: [String: Any], alg: String = "ES256", x5c: [String]? = nil, key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        try Self.sign(payload, alg: alg, x5c: x5c ?? self.x5c, key: key ?? leafKey)
    }

    static func sign(_ payload: [String: Any], alg: String = "ES256", x5c: [String]?, key: P256.Signing.PrivateKey) throws -> String {
        var header: [String: Any] = ["alg": alg, "typ": "JWT"]
        if let x5c { header["x5c"] = x5c }
        return try JWSSigner.sign(
            headerJSON: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]),
            payloadJSON: try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]),
            key: key)
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64urlDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// A verifier trusting this PKI's root.
    func verifier(
        bundleId: String? = nil, appAppleId: Int64? = nil, environment: AppStore.Environment? = nil,
        validationTime: SignedDataVerifier.ValidationTime = .signedDate, cache: ChainCache = ChainCache(),
        ocsp: OCSPChecking? = nil, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            .init(
                rootCertificates: [rootDER], bundleId: bundleId, appAppleId: appAppleId, environment: environment,
                validationTime: validationTime, ocsp: ocsp, clock: clock),
            cache: cache)
    }
}

/// 2025-06-01 in epoch milliseconds, inside every default validity window.
let signedAt: Int64 = 1_748_736_000_000

func transactionPayload(bundleId: String = "com.example.app", environment: String = "Sandbox", signedDate: Int64 = signedAt) -> [String:
    Any]
{
    [
        "transactionId": "2000000000000001", "originalTransactionId": "2000000000000001",
        "bundleId": bundleId, "productId": "com.example.monthly", "subscriptionGroupIdentifier": "21000000",
        "purchaseDate": signedDate - 1000, "originalPurchaseDate": signedDate - 1000, "expiresDate": signedDate + 2_592_000_000,
        "quantity": 1, "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED",
        "signedDate": signedDate, "environment": environment, "transactionReason": "PURCHASE",
        "storefront": "USA", "storefrontId": "143441", "price": 9990, "currency": "USD",
    ]
}
