import AppStore
import ArgumentParser
import Foundation
import X509

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify and decode App Store signed data: a notification, transaction, renewal info, app transaction or app receipt.",
        discussion: """
            Reads a raw JWS, Apple's webhook body {"signedPayload": "…"}, an app receipt (base64 or DER PKCS#7), or a legacy transaction receipt, from a file or standard input (-).

            Receipts are checked against Apple Inc. Root unless --root is given, and print with verifyReceipt's field names. --device-id adds the receipt's device-hash check. A legacy transaction receipt's signature cannot be checked locally: it prints its transaction id with "signature_verified": false.

            Valid input: exit 0, and the decoded payload as JSON on standard output with Apple's field names. A notification's nested transaction, renewal info and app transaction appear decoded under data.transactionInfo, data.renewalInfo and appData.appTransactionInfo.

            Rejected input: exit 1, and the error's name and message on standard error. Usage errors: exit 2.
            """
    )

    @Argument(help: ArgumentHelp("A file holding the signed data, or - for standard input.", valueName: "path | -"))
    var input: String

    @Option(
        name: .customLong("root"),
        help: ArgumentHelp("A trusted root certificate (DER or PEM). Replaces Apple's roots; repeatable.", valueName: "der-file"))
    var roots: [String] = []

    @Option(help: ArgumentHelp("The expected bundle id. Omitted: not checked.", valueName: "id"))
    var bundleId: String?

    @Option(
        help: ArgumentHelp("The expected appAppleId, checked on production data. Required with --environment production.", valueName: "n"))
    var appAppleId: Int64?

    @Option(
        help: ArgumentHelp(
            "The expected environment: production, sandbox, xcode or localtesting. Omitted: not checked.",
            valueName: "production|sandbox|xcode|localtesting"))
    var environment: String?

    @Option(help: ArgumentHelp("For a receipt: the device's identifierForVendor, to check the receipt's device hash.", valueName: "uuid"))
    var deviceId: String?

    @Option(
        help: ArgumentHelp(
            "When certificates must be valid: signed (the payload's signedDate), now, or epoch milliseconds.",
            valueName: "signed|now|epoch-ms"))
    var at: String = "signed"

    /// Signed data is a few kilobytes; anything far larger is refused before it is read whole.
    static let maxInputBytes = 1 << 20

    func run() async throws {
        let configuration = try makeConfiguration()
        let device: UUID? = try deviceId.map { text in
            guard let uuid = UUID(uuidString: text) else { throw UsageError(message: "--device-id must be a UUID, not '\(text)'") }
            return uuid
        }
        let data = try readInput()
        do {
            guard data.count <= Self.maxInputBytes else {
                throw VerificationError(.invalidJWTFormat, "the input is over \(Self.maxInputBytes) bytes")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let json: Data
            switch try SignedInput.classify(data) {
            case .jws(let jws):
                let verifier = try makeVerifier { () throws(SignedDataVerifier.ConfigurationError) in try SignedDataVerifier(configuration)
                }
                json = try encoder.encode(try await verifier.verify(jws))
            case .receipt(let receipt):
                var receiptConfiguration = ReceiptVerifier.Configuration(
                    bundleId: configuration.bundleId, environment: configuration.environment,
                    validationTime: configuration.validationTime)
                if !roots.isEmpty { receiptConfiguration.rootCertificates = configuration.rootCertificates }
                let verifier = try makeVerifier { () throws(SignedDataVerifier.ConfigurationError) in
                    try ReceiptVerifier(receiptConfiguration)
                }
                json = try encoder.encode(try await verifier.verify(receipt, deviceIdentifier: device))
            case .legacyTransactionReceipt(let receipt):
                json = try encoder.encode(try LegacyTransactionReceipt(base64: receipt))
            }
            FileHandle.standardOutput.write(json + Data("\n".utf8))
        } catch let error as VerificationError {
            FileHandle.standardError.write(Data("\(error.code.rawValue): \(error.message)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func makeVerifier<V>(_ make: () throws(SignedDataVerifier.ConfigurationError) -> V) throws -> V {
        do {
            return try make()
        } catch {
            throw UsageError(message: error.message)
        }
    }

    private func makeConfiguration() throws -> SignedDataVerifier.Configuration {
        var configuration = SignedDataVerifier.Configuration()
        if !roots.isEmpty {
            configuration.rootCertificates = try roots.map(Self.readCertificate)
        }
        configuration.bundleId = bundleId
        configuration.appAppleId = appAppleId
        if let environment {
            guard let parsed = Self.environments[environment.lowercased()] else {
                throw UsageError(message: "--environment must be production, sandbox, xcode or localtesting, not '\(environment)'")
            }
            configuration.environment = parsed
        }
        switch at {
        case "signed": configuration.validationTime = .signedDate
        case "now": configuration.validationTime = .now
        default:
            guard let milliseconds = Int64(at) else {
                throw UsageError(message: "--at must be signed, now or epoch milliseconds, not '\(at)'")
            }
            configuration.validationTime = .fixed(Timestamp(millisecondsSince1970: milliseconds).date)
        }
        return configuration
    }

    static let environments: [String: AppStore.Environment] = [
        "production": .production, "sandbox": .sandbox, "xcode": .xcode, "localtesting": .localTesting,
    ]

    /// Reads at most one byte more than the limit, so that an oversized input is seen without being read whole.
    private func readInput() throws -> Data {
        let handle: FileHandle
        if input == "-" {
            handle = .standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: input) else {
                throw UsageError(message: "cannot read '\(input)'")
            }
            handle = file
        }
        do {
            return try handle.read(upToCount: Self.maxInputBytes + 1) ?? Data()
        } catch {
            throw UsageError(message: "cannot read '\(input)': \(error)")
        }
    }

    private static func readCertificate(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError(message: "cannot read the root certificate '\(path)'")
        }
        do {
            if data.starts(with: Data("-----BEGIN".utf8)) {
                let certificate = try Certificate(pemEncoded: String(decoding: data, as: UTF8.self))
                return try certificate.serializeAsPEM().derBytes
            }
            // DER as given, once it parses as a certificate.
            _ = try Certificate(derEncoded: Array(data))
            return Array(data)
        } catch {
            throw UsageError(message: "'\(path)' is not a DER or PEM X.509 certificate")
        }
    }
}
