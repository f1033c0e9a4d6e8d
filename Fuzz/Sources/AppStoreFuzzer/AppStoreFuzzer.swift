import AppStore
import AppStoreSimulator
import Dispatch
import Foundation
import SwiftASN1
@_spi(CMS) import X509
import _CryptoExtras

/// With `FUZZ_TARGET=jws` (the default), the first input byte picks what the rest is:
/// - 0: a JWS (or webhook body) as text, verified as any kind;
/// - 1: a DER certificate, put as the leaf into the `x5c` of a JWS otherwise well formed;
/// - 2: a DER certificate, put as the intermediate;
/// - 3: a payload, signed by a trusted CA and verified as a transaction, renewal info, app transaction and
///   notification: this reaches the decoders and the claim checks behind a valid signature.
/// With `FUZZ_TARGET=receipt`:
/// - 0: an app receipt as given (DER or base64), verified against Apple's root and against the harness's own;
/// - 1: a receipt payload, signed as PKCS#7 by the harness's own RSA chain: this reaches the payload parser;
/// - 2: a legacy transaction receipt, and the input classifier.
/// Any crash, trap or sanitizer report is a finding; every rejection must be a `VerificationError`.
struct Harness: Sendable {
    let ca: SimulatorCA
    let verifier: SignedDataVerifier
    let lenient: SignedDataVerifier

    init() {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        do {
            ca = try SimulatorCA(validity: now.addingTimeInterval(-86_400 * 3650)...now.addingTimeInterval(86_400 * 3650))
            verifier = try SignedDataVerifier(
                .init(rootCertificates: [ca.rootDER], bundleId: "com.example.app", appAppleId: 1, environment: .production))
            lenient = try SignedDataVerifier(.init(rootCertificates: [ca.rootDER], environment: .xcode))
        } catch {
            // Setting up the harness only uses constants; if it fails, there is nothing to fuzz.
            print("fuzz harness setup failed: \(error)")
            exit(1)
        }
    }

    func header(x5c: [[UInt8]]) -> String {
        let json = #"{"alg":"ES256","x5c":["# + x5c.map { "\"\(Data($0).base64EncodedString())\"" }.joined(separator: ",") + "]}"
        return Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    func run(_ input: [UInt8]) async {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        switch mode % 4 {
        case 0:
            let text = String(decoding: rest, as: UTF8.self)
            if let jws = try? SignedInput.extractJWS(from: Data(rest)) {
                await expectOnlyVerificationErrors { try await verifier.verify(jws) }
                await expectOnlyVerificationErrors { try await lenient.verify(jws) }
            }
            await expectOnlyVerificationErrors { try await verifier.verifyNotification(text) }
        case 1, 2:
            let x5c = mode % 4 == 1 ? [rest, ca.intermediateDER, ca.rootDER] : [ca.leafDER, rest, ca.rootDER]
            let jws = header(x5c: x5c) + ".eyJzaWduZWREYXRlIjoxNzUwMDAwMDAwMDAwfQ.AAAA"
            await expectOnlyVerificationErrors { try await verifier.verifyTransaction(jws) }
            await expectOnlyVerificationErrors { try await lenient.verifyTransaction(header(x5c: [rest]) + ".e30.AAAA") }
        default:
            guard
                let jws = try? JWSSigner.sign(
                    headerJSON: Data(#"{"alg":"ES256","x5c":[]}"#.utf8), payloadJSON: Data(rest), key: ca.leafKey),
                let signed = try? signWithChain(rest)
            else { return }
            await expectOnlyVerificationErrors { try await verifier.verifyTransaction(jws) }
            await expectOnlyVerificationErrors { try await verifier.verifyTransaction(signed) }
            await expectOnlyVerificationErrors { try await verifier.verifyRenewalInfo(signed) }
            await expectOnlyVerificationErrors { try await verifier.verifyAppTransaction(signed) }
            await expectOnlyVerificationErrors { try await verifier.verifyNotification(signed) }
            await expectOnlyVerificationErrors { try await lenient.verify(signed) }
        }
    }

    func signWithChain(_ payload: [UInt8]) throws -> String {
        let header =
            #"{"alg":"ES256","x5c":["#
            + [ca.leafDER, ca.intermediateDER, ca.rootDER]
            .map { "\"\(Data($0).base64EncodedString())\"" }.joined(separator: ",") + "]}"
        return try JWSSigner.sign(headerJSON: Data(header.utf8), payloadJSON: Data(payload), key: ca.leafKey)
    }
}

/// The receipt side: an RSA root that signs a leaf, so that fuzzed payloads carry a valid signature.
struct ReceiptHarness: Sendable {
    let leaf: Certificate
    let leafKey: Certificate.PrivateKey
    let apple: ReceiptVerifier
    let own: ReceiptVerifier

    init() {
        do {
            let rootKey = Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            leafKey = Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            let rootName = try DistinguishedName { CommonName("Fuzz Receipt Root") }
            let leafName = try DistinguishedName { CommonName("Fuzz Receipt Signing") }
            let start = Date(timeIntervalSince1970: 0)
            let end = Date(timeIntervalSince1970: 4_000_000_000)
            let root = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: rootKey.publicKey, notValidBefore: start, notValidAfter: end,
                issuer: rootName, subject: rootName, signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
                issuerPrivateKey: rootKey)
            leaf = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: leafKey.publicKey, notValidBefore: start, notValidAfter: end,
                issuer: rootName, subject: leafName, signatureAlgorithm: .sha256WithRSAEncryption,
                extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) }, issuerPrivateKey: rootKey)
            var serializer = DER.Serializer()
            try serializer.serialize(root)
            apple = try ReceiptVerifier()
            own = try ReceiptVerifier(
                .init(rootCertificates: [serializer.serializedBytes], validationTime: .fixed(Date(timeIntervalSince1970: 1_750_000_000))))
        } catch {
            print("receipt harness setup failed: \(error)")
            exit(1)
        }
    }

    func run(_ input: [UInt8]) async {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        switch mode % 3 {
        case 0:
            await expectOnlyVerificationErrors { try await apple.verify(rest, deviceIdentifier: UUID()) }
            await expectOnlyVerificationErrors { try await own.verify(rest) }
        case 1:
            guard
                let signed = try? CMS.sign(
                    rest, signatureAlgorithm: .sha256WithRSAEncryption, certificate: leaf,
                    privateKey: leafKey, detached: false)
            else { return }
            await expectOnlyVerificationErrors { try await own.verify(signed, deviceIdentifier: UUID()) }
        default:
            await expectOnlyVerificationErrors { try LegacyTransactionReceipt(base64: rest) }
            await expectOnlyVerificationErrors { try SignedInput.classify(Data(rest)) }
        }
    }
}

func expectOnlyVerificationErrors<T>(_ body: () async throws -> T) async {
    do {
        _ = try await body()
    } catch is VerificationError {
    } catch {
        print("unexpected error type: \(type(of: error)): \(error)")
        abort()
    }
}

let target = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "jws"
let harness = Harness()
let receiptHarness = ReceiptHarness()

/// Bridges libFuzzer's synchronous callback to the async API.
final class Completion: @unchecked Sendable {
    // Safe: the semaphore orders the one write (in the task) before the one read (after wait()).
    let semaphore = DispatchSemaphore(value: 0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let completion = Completion()
    Task {
        if target == "receipt" {
            await receiptHarness.run(input)
        } else {
            await harness.run(input)
        }
        completion.semaphore.signal()
    }
    completion.semaphore.wait()
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point under this name; hand control to libFuzzer's driver.
@_cdecl("AppStoreFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
