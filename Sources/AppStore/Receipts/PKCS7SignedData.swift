import SwiftASN1
import X509

/// The parts of a CMS SignedData (RFC 5652 §5) that receipt verification needs, parsed from BER: app receipts use
/// indefinite lengths and constructed OCTET STRINGs.
struct PKCS7SignedData {
    static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    static let dataOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let messageDigestOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]
    static let sha1OID: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    static let sha256OID: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let rsaEncryptionOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    static let sha1WithRSAOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 5]
    static let sha256WithRSAOID: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 11]

    /// The signed content: the receipt payload.
    var content: [UInt8]
    var certificates: [Certificate]
    var signer: SignerInfo

    struct SignerInfo {
        var issuer: DistinguishedName
        var serialNumber: ArraySlice<UInt8>
        var digestAlgorithm: ASN1ObjectIdentifier
        var signatureAlgorithm: ASN1ObjectIdentifier
        /// The DER of the signed attributes re-tagged as a SET, which is what is signed when they are present.
        var signedAttributesDER: [UInt8]?
        var messageDigest: [UInt8]?
        var signature: [UInt8]
    }

    struct Malformed: Error {
        var reason: String
    }

    init(ber bytes: [UInt8]) throws {
        let root = try BER.parse(bytes)
        let contentInfo = try Self.children(root, .sequence, "ContentInfo")
        guard contentInfo.count >= 2, try ASN1ObjectIdentifier(berEncoded: contentInfo[0]) == Self.signedDataOID else {
            throw Malformed(reason: "the content type is not signedData")
        }
        let explicit = try Self.children(contentInfo[1], ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "[0] content")
        guard explicit.count == 1 else { throw Malformed(reason: "the [0] content holds \(explicit.count) elements") }
        let signedData = try Self.children(explicit[0], .sequence, "SignedData")
        guard signedData.count >= 4 else { throw Malformed(reason: "SignedData has \(signedData.count) fields") }
        // version, digestAlgorithms, encapContentInfo, [0] certificates?, [1] crls?, signerInfos
        let encap = try Self.children(signedData[2], .sequence, "EncapsulatedContentInfo")
        guard encap.count == 2, try ASN1ObjectIdentifier(berEncoded: encap[0]) == Self.dataOID else {
            throw Malformed(reason: "the encapsulated content is not id-data, or is absent")
        }
        let eContent = try Self.children(encap[1], ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "[0] eContent")
        guard eContent.count == 1 else { throw Malformed(reason: "the eContent holds \(eContent.count) elements") }
        content = Array(try ASN1OctetString(berEncoded: eContent[0]).bytes)

        var certificates: [Certificate] = []
        var signerInfos: ASN1Node?
        for node in signedData[3...] {
            if node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                for certificate in try Self.children(node, node.identifier, "certificates") {
                    guard certificates.count < 16 else { throw Malformed(reason: "more than 16 certificates") }
                    certificates.append(try Certificate(derEncoded: Array(certificate.encodedBytes)))
                }
            } else if node.identifier == .set {
                signerInfos = node
            }
        }
        self.certificates = certificates
        guard let signerInfos else { throw Malformed(reason: "there are no signerInfos") }
        let signers = try Self.children(signerInfos, .set, "signerInfos")
        guard signers.count == 1 else { throw Malformed(reason: "expected one signer, found \(signers.count)") }
        signer = try Self.signerInfo(signers[0])
    }

    private static func signerInfo(_ node: ASN1Node) throws -> SignerInfo {
        let fields = try children(node, .sequence, "SignerInfo")
        guard fields.count >= 5 else { throw Malformed(reason: "SignerInfo has \(fields.count) fields") }
        let sid = try children(fields[1], .sequence, "IssuerAndSerialNumber")
        guard sid.count == 2, sid[1].identifier == .integer, case .primitive(let serial) = sid[1].content else {
            throw Malformed(reason: "the signer is not identified by issuer and serial number")
        }
        let issuer = try DistinguishedName(derEncoded: Array(sid[0].encodedBytes))
        let digestAlgorithm = try algorithm(fields[2])
        var index = 3
        var signedAttributesDER: [UInt8]?
        var messageDigest: [UInt8]?
        if fields[index].identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            // Signed attributes are signed as an explicit SET OF (RFC 5652 §5.4).
            var der = Array(fields[index].encodedBytes)
            der[0] = 0x31
            signedAttributesDER = der
            for attribute in try children(fields[index], fields[index].identifier, "signedAttrs") {
                let parts = try children(attribute, .sequence, "Attribute")
                if parts.count == 2, try ASN1ObjectIdentifier(berEncoded: parts[0]) == messageDigestOID {
                    let values = try children(parts[1], .set, "messageDigest values")
                    if let first = values.first { messageDigest = Array(try ASN1OctetString(berEncoded: first).bytes) }
                }
            }
            index += 1
        }
        guard index + 1 < fields.count else { throw Malformed(reason: "SignerInfo lacks its signature") }
        let signatureAlgorithm = try algorithm(fields[index])
        let signature = Array(try ASN1OctetString(berEncoded: fields[index + 1]).bytes)
        return SignerInfo(
            issuer: issuer, serialNumber: serial, digestAlgorithm: digestAlgorithm, signatureAlgorithm: signatureAlgorithm,
            signedAttributesDER: signedAttributesDER, messageDigest: messageDigest, signature: signature)
    }

    private static func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        let parts = try children(node, .sequence, "AlgorithmIdentifier")
        guard let first = parts.first else { throw Malformed(reason: "an empty AlgorithmIdentifier") }
        return try ASN1ObjectIdentifier(berEncoded: first)
    }

    static func children(_ node: ASN1Node, _ identifier: ASN1Identifier, _ what: String) throws -> [ASN1Node] {
        guard node.identifier == identifier, case .constructed(let nodes) = node.content else {
            throw Malformed(reason: "\(what) is not the expected constructed \(identifier)")
        }
        return Array(nodes)
    }

    /// The certificate that made the signature.
    var signerCertificate: Certificate? {
        let serial = Self.magnitude(signer.serialNumber)
        return certificates.first { $0.issuer == signer.issuer && Self.magnitude($0.serialNumber.bytes) == serial }
    }

    /// An INTEGER's bytes without the leading zero DER adds before a high bit, so that serials compare by value.
    static func magnitude(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.drop { $0 == 0 }
    }

    /// The X.509 name of the signature algorithm, from the digest and the signature algorithm fields (Apple writes
    /// `rsaEncryption` with a separate digest).
    var signatureAlgorithm: Certificate.SignatureAlgorithm? {
        switch (signer.digestAlgorithm, signer.signatureAlgorithm) {
        case (Self.sha256OID, Self.rsaEncryptionOID), (Self.sha256OID, Self.sha256WithRSAOID): .sha256WithRSAEncryption
        case (Self.sha1OID, Self.rsaEncryptionOID), (Self.sha1OID, Self.sha1WithRSAOID): .sha1WithRSAEncryption
        default: nil
        }
    }
}
