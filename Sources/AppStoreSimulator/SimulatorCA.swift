import AppStore
import Crypto
import Foundation
import SwiftASN1
import X509

/// The simulator's own certificate authority, shaped like Apple's so that the real verifier runs unchanged:
/// a P-384 root, a P-384 intermediate carrying OID 1.2.840.113635.100.6.2.1, and a P-256 (ES256) leaf carrying
/// OID 1.2.840.113635.100.6.11.1. A server trusts it only when its root is configured as a trusted root.
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
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
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
