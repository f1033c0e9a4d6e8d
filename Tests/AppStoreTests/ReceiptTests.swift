import AppStore
import Crypto
import Foundation
import SwiftASN1
import TestSupport
import Testing
@_spi(CMS) import X509
import _CryptoExtras

@Suite struct ReceiptTests {
    static let g5Device = UUID(uuidString: "956328D9-CC6A-47F4-BE40-6953FB0AB6C7")!

    @Test func sandboxG5ReceiptVerifiesAndDecodes() async throws {
        let receipt = try await ReceiptVerifier().verify(try Fixtures.bytes("receipts/receipt-sandbox-g5"), deviceIdentifier: Self.g5Device)
        #expect(receipt.bundleId == "dev.bonzer.weeka.app")
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.environment == .sandbox)
        #expect(receipt.applicationVersion == "2")
        #expect(receipt.originalApplicationVersion == "1.0")
        #expect(receipt.receiptCreationDate?.millisecondsSince1970 == 1_766_774_387_000)
        #expect(receipt.sha1Hash.map { $0.map { String(format: "%02x", $0) }.joined() } == "2158847543683847e9382a0fc51853cb17abcd6d")
        #expect(receipt.inApp.count == 2)
        let first = try #require(receipt.inApp.first)
        #expect(first.productId == "dev.bonzer.weeka.app.subscription.pro.annual")
        #expect(first.transactionId == "2000001092134138")
        #expect(first.originalTransactionId == "2000001092134138")
        // 2025-12-26T17:43:07Z and 2025-12-26T18:19:07Z.
        #expect(first.purchaseDate?.millisecondsSince1970 == 1_766_770_987_000)
        #expect(first.expiresDate?.millisecondsSince1970 == 1_766_773_147_000)
        #expect(first.webOrderLineItemId == "2000000123357229")
        #expect(first.quantity == 1)
        #expect(first.isTrialPeriod == false)
        #expect(first.cancellationDate == nil)
    }

    @Test func deviceCheckFailsForAnotherDevice() async throws {
        let error = await verificationError {
            try await ReceiptVerifier().verify(try Fixtures.bytes("receipts/receipt-sandbox-g5"), deviceIdentifier: UUID())
        }
        #expect(error?.code == .deviceMismatch)
    }

    @Test func receiptChecksBundleAndEnvironment() async throws {
        let bytes = try Fixtures.bytes("receipts/receipt-sandbox-g5")
        let bundle = await verificationError { try await ReceiptVerifier(.init(bundleId: "com.other")).verify(bytes) }
        #expect(bundle?.code == .invalidAppIdentifier)
        let environment = await verificationError { try await ReceiptVerifier(.init(environment: .production)).verify(bytes) }
        #expect(environment?.code == .invalidEnvironment)
        _ = try await ReceiptVerifier(.init(bundleId: "dev.bonzer.weeka.app", environment: .sandbox)).verify(bytes)
    }

    @Test func strictTimeRejectsTheExpiredSigner() async throws {
        // The G5 signing certificate expired on 2026-08-23; the receipt was created in 2025.
        let verifier = try ReceiptVerifier(.init(validationTime: .fixed(Date(timeIntervalSince1970: 1_790_000_000))))
        let error = await verificationError { try await verifier.verify(try Fixtures.bytes("receipts/receipt-sandbox-g5")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func derInputWorksToo() async throws {
        let der = try #require(Data(base64Encoded: try Fixtures.string("receipts/receipt-sandbox-g5"), options: .ignoreUnknownCharacters))
        #expect(try await ReceiptVerifier().verify(Array(der)).inApp.count == 2)
    }

    @Test(arguments: ["receipts/receipt-xcode", "xcode/xcode-app-receipt-empty", "xcode/xcode-app-receipt-with-transaction"])
    func xcodeReceiptsNeedTheStoreKitCertificate(_ name: String) async throws {
        let bytes = try Fixtures.bytes(name)
        let error = await verificationError { try await ReceiptVerifier().verify(bytes) }
        #expect(error?.code == .verificationFailure)
        let verifier = try ReceiptVerifier(.init(rootCertificates: [try Fixtures.bytes("xcode/StoreKitTestCertificate.cer")]))
        let receipt = try await verifier.verify(bytes)
        #expect(receipt.receiptType == "Xcode")
        #expect(receipt.environment == .xcode)
    }

    @Test func xcodeReceiptDatesWithOffsets() async throws {
        let verifier = try ReceiptVerifier(.init(rootCertificates: [try Fixtures.bytes("xcode/StoreKitTestCertificate.cer")]))
        let receipt = try await verifier.verify(try Fixtures.bytes("receipts/receipt-xcode"))
        // "2020-07-22T18:33:14+0100" is 17:33:14Z.
        #expect(receipt.inApp.first?.purchaseDate?.millisecondsSince1970 == 1_595_439_194_000)
        #expect(receipt.inApp.first?.expiresDate?.millisecondsSince1970 == 1_626_975_194_000)
        #expect(receipt.receiptCreationDate?.millisecondsSince1970 == 1_595_439_195_000)
        let withTransaction = try await verifier.verify(try Fixtures.bytes("xcode/xcode-app-receipt-with-transaction"))
        #expect(withTransaction.inApp.first?.productId == "pass.premium")
        #expect(withTransaction.inApp.first?.isInIntroOfferPeriod == true)
    }

    @Test func oneChangedByteInTheSignedContentFails() async throws {
        var der = Array(
            try #require(Data(base64Encoded: try Fixtures.string("receipts/receipt-sandbox-g5"), options: .ignoreUnknownCharacters)))
        // Inside the bundle id, well within the signed eContent.
        let marker = Array("dev.bonzer.weeka.app".utf8)
        let index = try #require((0..<(der.count - marker.count)).first { Array(der[$0..<($0 + marker.count)]) == marker })
        der[index] = UInt8(ascii: "D")
        let error = await verificationError { try await ReceiptVerifier().verify(der) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func receiptResignedByOurOwnCertificateFails() async throws {
        let ca = try ReceiptTestCA()
        let signed = try ca.sign(ReceiptTestCA.payload(bundleId: "dev.bonzer.weeka.app", entries: 1))
        let error = await verificationError { try await ReceiptVerifier().verify(signed) }
        #expect(error?.code == .verificationFailure)
        // The same receipt verifies when its own root is the configured one: the failure above is the trust.
        let receipt = try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(signed)
        #expect(receipt.bundleId == "dev.bonzer.weeka.app")
    }

    @Test func wrongRootFails() async throws {
        let other = try ReceiptTestCA()
        let error = await verificationError {
            try await ReceiptVerifier(.init(rootCertificates: [other.rootDER])).verify(try Fixtures.bytes("receipts/receipt-sandbox-g5"))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func truncatedInputIsAFormatError() async throws {
        let der = Array(
            try #require(Data(base64Encoded: try Fixtures.string("receipts/receipt-sandbox-g5"), options: .ignoreUnknownCharacters)))
        for length in [0, 1, 10, der.count / 2, der.count - 1] {
            let error = await verificationError { try await ReceiptVerifier().verify(Array(der.prefix(length))) }
            #expect(error?.code == .invalidReceiptFormat, "length \(length)")
        }
        let notBase64 = await verificationError { try await ReceiptVerifier().verify(Array("not a receipt!".utf8)) }
        #expect(notBase64?.code == .invalidReceiptFormat)
    }

    @Test func nestedSetWithABogusLengthIsAFormatError() async throws {
        let ca = try ReceiptTestCA()
        // An in-app attribute whose SET claims 200 bytes but holds 3.
        let bogus = ReceiptTestCA.attribute(17, [0x31, 0x81, 0xC8, 0x30, 0x01, 0x00])
        let signed = try ca.sign(ReceiptTestCA.set(ReceiptTestCA.payloadAttributes(bundleId: "com.example.app") + [bogus]))
        let error = await verificationError { try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(signed) }
        #expect(error?.code == .invalidReceiptFormat)
    }

    @Test func tenThousandInAppEntries() async throws {
        let ca = try ReceiptTestCA()
        let signed = try ca.sign(ReceiptTestCA.payload(bundleId: "com.example.app", entries: 10_000))
        let receipt = try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(signed)
        #expect(receipt.inApp.count == 10_000)
        #expect(receipt.inApp.last?.transactionId == "1000009999")
        let bounded = await verificationError {
            try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER], maxInAppEntries: 1000)).verify(signed)
        }
        #expect(bounded?.code == .invalidReceiptFormat)
        let tooLarge = await verificationError {
            try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER], maxInputBytes: 100_000)).verify(signed)
        }
        #expect(tooLarge?.code == .invalidReceiptFormat)
    }

    @Test func legacySHA1ChainVerifies() async throws {
        let ca = try ReceiptTestCA(algorithm: .sha1WithRSAEncryption)
        let signed = try ca.sign(ReceiptTestCA.payload(bundleId: "com.example.app", entries: 2))
        let receipt = try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(signed)
        #expect(receipt.inApp.count == 2)
        // A changed content byte breaks the SHA-1 signature just as it does the SHA-256 one.
        var tampered = signed
        let marker = Array("com.example.monthly".utf8)
        let index = try #require((0..<(tampered.count - marker.count)).first { Array(tampered[$0..<($0 + marker.count)]) == marker })
        tampered[index] = UInt8(ascii: "C")
        let error = await verificationError { try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(tampered) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func signedAttributesAreChecked() async throws {
        let ca = try ReceiptTestCA()
        let payload = ReceiptTestCA.payload(bundleId: "com.example.app", entries: 1)
        let signed = try ca.sign(payload, signingTime: Date())
        _ = try await ReceiptVerifier(.init(rootCertificates: [ca.rootDER])).verify(signed)
    }

    @Test func legacyTransactionReceiptYieldsItsTransactionId() throws {
        let legacy = try LegacyTransactionReceipt(base64: try Fixtures.bytes("appstore-test-ca/legacyTransaction"))
        #expect(legacy.transactionId == "33993399")
        #expect(legacy.signatureVerified == false)
        #expect(throws: VerificationError.self) { try LegacyTransactionReceipt(base64: Array("e30=".utf8) + [0x7B]) }
    }

    @Test func inputKindsAreToldApart() throws {
        #expect(
            try SignedInput.classify(try Fixtures.data("appstore-test-ca/legacyTransaction"))
                == .legacyTransactionReceipt(try Fixtures.bytes("appstore-test-ca/legacyTransaction").filter { $0 != 0x0A }))
        guard case .receipt = try SignedInput.classify(try Fixtures.data("receipts/receipt-sandbox-g5")) else {
            Issue.record("a base64 receipt was not recognised")
            return
        }
        guard case .jws = try SignedInput.classify(try Fixtures.data("appstore-test-ca/transactionInfo")) else {
            Issue.record("a JWS was not recognised")
            return
        }
    }
}

/// An RSA chain of our own and a DER writer for receipt payloads, to make receipts Apple never signed.
struct ReceiptTestCA {
    let rootKey: Certificate.PrivateKey
    let leafKey: Certificate.PrivateKey
    let root: Certificate
    let leaf: Certificate
    let algorithm: Certificate.SignatureAlgorithm

    /// - Parameter algorithm: `.sha1WithRSAEncryption` makes a chain like Apple's legacy receipt chain.
    init(algorithm: Certificate.SignatureAlgorithm = .sha256WithRSAEncryption) throws {
        self.algorithm = algorithm
        rootKey = Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
        leafKey = Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
        let rootName = try DistinguishedName { CommonName("Receipt Test Root") }
        let leafName = try DistinguishedName { CommonName("Receipt Test Signing") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: rootKey.publicKey, notValidBefore: TestPKI.start, notValidAfter: TestPKI.end,
            issuer: rootName, subject: rootName, signatureAlgorithm: algorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: rootKey)
        leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: leafKey.publicKey, notValidBefore: TestPKI.start, notValidAfter: TestPKI.end,
            issuer: rootName, subject: leafName, signatureAlgorithm: algorithm,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: rootKey)
    }

    var rootDER: [UInt8] { TestPKI.der(root) }

    func sign(_ payload: [UInt8], signingTime: Date? = nil) throws -> [UInt8] {
        try CMS.sign(
            payload, signatureAlgorithm: algorithm, certificate: leaf, privateKey: leafKey,
            signingTime: signingTime, detached: false)
    }

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var n = content.count
            var bytes: [UInt8] = []
            while n > 0 {
                bytes.insert(UInt8(n & 0xFF), at: 0)
                n >>= 8
            }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + content
    }

    static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var n = value
        repeat {
            bytes.insert(UInt8(n & 0xFF), at: 0)
            n >>= 8
        } while n > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func set(_ elements: [[UInt8]]) -> [UInt8] { tlv(0x31, elements.flatMap { $0 }) }

    static func payloadAttributes(bundleId: String) -> [[UInt8]] {
        [
            attribute(0, utf8("ProductionSandbox")), attribute(2, utf8(bundleId)), attribute(3, utf8("1")),
            attribute(12, ia5("2025-06-01T00:00:00Z")), attribute(19, utf8("1.0")),
        ]
    }

    static func payload(bundleId: String, entries: Int) -> [UInt8] {
        var attributes = payloadAttributes(bundleId: bundleId)
        for index in 0..<entries {
            let purchase = set([
                attribute(1701, integer(1)), attribute(1702, utf8("com.example.monthly")),
                attribute(1703, utf8("\(1_000_000_000 + index)")), attribute(1705, utf8("1000000000")),
                attribute(1704, ia5("2025-05-01T00:00:00Z")), attribute(1708, ia5("2025-06-01T00:00:00Z")),
                attribute(1712, ia5("")),
            ])
            attributes.append(attribute(17, purchase))
        }
        return set(attributes)
    }
}
