import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import SwiftASN1
import TestSupport
import Testing
import X509

/// The simulator's chain against strict X.509, as Apple's app-store-server-library checks it: OpenSSL's
/// `verify -x509_strict` (errors 85 and 86 were a missing Authority and Subject Key Identifier), and a state folder
/// made before the key identifiers existed is refused with a message that says what to do.
@Suite("Simulator chain shape")
struct SimulatorChainShapeTests {
    static func pem(_ der: [UInt8]) -> String {
        "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }

    /// Runs `openssl verify -x509_strict` on the chain; its exit status and output.
    static func opensslVerify(_ ca: SimulatorCA, in directory: URL) throws -> (status: Int32, output: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, der) in [("root.pem", ca.rootDER), ("intermediate.pem", ca.intermediateDER), ("leaf.pem", ca.leafDER)] {
            try Data(pem(der).utf8).write(to: directory.appendingPathComponent(name))
        }
        let process = try ChildProcess(
            "/usr/bin/env",
            arguments: [
                "openssl", "verify", "-x509_strict", "-CAfile", directory.appendingPathComponent("root.pem").path,
                "-untrusted", directory.appendingPathComponent("intermediate.pem").path, directory.appendingPathComponent("leaf.pem").path,
            ], stdout: .pipe, stderr: .pipe)
        process.closeInput()
        let outputs = process.outputs()
        let (stdout, stderr) = (outputs.stdout, outputs.stderr)
        let output = String(decoding: stdout + stderr, as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test("openssl verify -x509_strict accepts the chain")
    func strictOpenSSL() throws {
        let now = Date()
        let ca = try SimulatorCA(validity: now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400))
        let result = try Self.opensslVerify(ca, in: TestRun.scratch("chain"))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("leaf.pem: OK"), "\(result.output)")
    }

    @Test("the extensions of Apple's chain: key identifiers, key usages, basic constraints, Apple's OIDs")
    func extensions() throws {
        let now = Date()
        let ca = try SimulatorCA(validity: now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400))
        let rootId = try #require(try ca.root.extensions.subjectKeyIdentifier).keyIdentifier
        let intermediateId = try #require(try ca.intermediate.extensions.subjectKeyIdentifier).keyIdentifier
        #expect(try ca.intermediate.extensions.authorityKeyIdentifier?.keyIdentifier == rootId)
        #expect(try ca.leaf.extensions.authorityKeyIdentifier?.keyIdentifier == intermediateId)
        #expect(try ca.leaf.extensions.subjectKeyIdentifier != nil)
        #expect(try ca.root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(try ca.intermediate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(try ca.leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try ca.intermediate.extensions.keyUsage == KeyUsage(keyCertSign: true, cRLSign: true))
        #expect(try ca.leaf.extensions.keyUsage == KeyUsage(digitalSignature: true))
        #expect(ca.intermediate.extensions[oid: SimulatorCA.intermediateOID] != nil)
        #expect(ca.leaf.extensions[oid: SimulatorCA.leafOID] != nil)
        for certificate in [ca.root, ca.intermediate, ca.leaf] {
            #expect(certificate.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
            #expect(certificate.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
        }
    }

    @Test("a state folder made by an older version (no key identifiers) is refused, with what to do")
    func olderStateRefused() throws {
        // The chain as earlier versions made it: the same shape without the key identifiers.
        let now = Date()
        let validity = now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400)
        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Old Root") }
        let intermediateName = try DistinguishedName { CommonName("Old Intermediate") }
        func make(_ key: Certificate.PublicKey, issuer: DistinguishedName, subject: DistinguishedName, by signer: P384.Signing.PrivateKey)
            throws -> [UInt8]
        {
            let certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: key, notValidBefore: validity.lowerBound,
                notValidAfter: validity.upperBound, issuer: issuer, subject: subject, signatureAlgorithm: .ecdsaWithSHA384,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
                issuerPrivateKey: .init(signer))
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        let directory = try TestRun.scratch("chain")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(try make(.init(rootKey.publicKey), issuer: rootName, subject: rootName, by: rootKey)).write(
            to: directory.appendingPathComponent(SimulatorCA.StateFile.root))
        try Data(try make(.init(intermediateKey.publicKey), issuer: rootName, subject: intermediateName, by: rootKey)).write(
            to: directory.appendingPathComponent(SimulatorCA.StateFile.intermediate))
        try Data(
            try make(
                .init(leafKey.publicKey), issuer: intermediateName, subject: try DistinguishedName { CommonName("Old Leaf") },
                by: intermediateKey)
        ).write(to: directory.appendingPathComponent(SimulatorCA.StateFile.leaf))
        try Data(leafKey.pemRepresentation.utf8).write(to: directory.appendingPathComponent(SimulatorCA.StateFile.leafKey))

        let error = #expect(throws: SimulatorStateError.self) { try SimulatorCA.loadOrCreate(in: directory) }
        #expect(error?.message.contains("older version") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("delete the state folder") == true)
        #expect(error?.message.contains(directory.path) == true)
    }
}
