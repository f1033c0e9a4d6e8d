import AppStore
import Crypto
import Foundation
import SwiftASN1
import X509

/// The simulator's own certificate authority, shaped like Apple's so that the real verifier runs unchanged, and so that
/// strict X.509 verifiers (Apple's app-store-server-library, `openssl verify -x509_strict`) accept it: a P-384 root, a
/// P-384 intermediate carrying OID 1.2.840.113635.100.6.2.1, and a P-256 (ES256) leaf carrying OID
/// 1.2.840.113635.100.6.11.1; as in Apple Root CA - G3 → WWDR G6 → the App Store signing leaf, every certificate has a
/// Subject Key Identifier, the two issued ones an Authority Key Identifier naming their issuer's, the CAs critical basic
/// constraints and key usage (certificate and CRL signing; the intermediate with path length 0), the leaf critical
/// `CA:FALSE` and digital signature. A server trusts it only when its root is configured as a trusted root.
public struct SimulatorCA: Sendable {
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    public let root: Certificate
    public let intermediate: Certificate
    public let leaf: Certificate
    public let leafKey: P256.Signing.PrivateKey

    /// DER of root, intermediate and leaf.
    public let rootDER: [UInt8]
    public let intermediateDER: [UInt8]
    public let leafDER: [UInt8]

    /// Makes a new CA whose certificates are valid over `validity`.
    public init(name: String = "Storekeeper Simulator", validity: ClosedRange<Date>) throws {
        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName("\(name) Root CA")
            OrganizationName(name)
        }
        let intermediateName = try DistinguishedName {
            CommonName("\(name) Worldwide Developer Relations CA")
            OrganizationName(name)
        }
        let leafName = try DistinguishedName {
            CommonName("\(name) App Store Signing")
            OrganizationName(name)
        }
        let rootKeyId = SubjectKeyIdentifier(hash: .init(rootKey.publicKey))
        let intermediateKeyId = SubjectKeyIdentifier(hash: .init(intermediateKey.publicKey))
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                rootKeyId
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                AuthorityKeyIdentifier(keyIdentifier: rootKeyId.keyIdentifier)
                intermediateKeyId
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(oid: Self.intermediateOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                AuthorityKeyIdentifier(keyIdentifier: intermediateKeyId.keyIdentifier)
                SubjectKeyIdentifier(hash: .init(leafKey.publicKey))
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: Self.leafOID, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(intermediateKey))
        self.init(
            root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey,
            rootDER: try Self.der(root), intermediateDER: try Self.der(intermediate), leafDER: try Self.der(leaf))
    }

    init(
        root: Certificate, intermediate: Certificate, leaf: Certificate, leafKey: P256.Signing.PrivateKey,
        rootDER: [UInt8], intermediateDER: [UInt8], leafDER: [UInt8]
    ) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
        self.leafKey = leafKey
        self.rootDER = rootDER
        self.intermediateDER = intermediateDER
        self.leafDER = leafDER
    }

    /// What keeps a chain from having the shape of Apple's (and of a CA this version makes), or nil: the key identifiers
    /// that strict verifiers require. CAs made before they were added lack them.
    static func shapeProblem(root: Certificate, intermediate: Certificate, leaf: Certificate) -> String? {
        let rootId = try? root.extensions.subjectKeyIdentifier?.keyIdentifier
        let intermediateId = try? intermediate.extensions.subjectKeyIdentifier?.keyIdentifier
        guard let rootId, let intermediateId, (try? leaf.extensions.subjectKeyIdentifier) != nil else {
            return "a certificate has no Subject Key Identifier"
        }
        guard (try? intermediate.extensions.authorityKeyIdentifier?.keyIdentifier) == rootId,
            (try? leaf.extensions.authorityKeyIdentifier?.keyIdentifier) == intermediateId
        else { return "an issued certificate has no Authority Key Identifier naming its issuer's key" }
        return nil
    }

    /// Signs `payload` as the App Store does: ES256, with `x5c` = leaf, intermediate, root.
    public func sign(_ payload: some Encodable) throws -> String {
        try JWSSigner.sign(payload, x5c: [leafDER, intermediateDER, rootDER], key: leafKey)
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
