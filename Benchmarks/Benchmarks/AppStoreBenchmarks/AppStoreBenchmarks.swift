import AppStore
import AppStoreSimulator
import Benchmark
import BenchmarkSettings
import Crypto
import Foundation

/// The fixtures every benchmark shares: a chain shaped like Apple's (P-384 root and intermediate, P-256 leaf) from
/// the simulator's CA, and data signed with it.
struct Fixture {
    let ca: SimulatorCA
    let transactionJWS: String
    let notificationJWS: String
    let signingInput: Data
    let signature: P256.Signing.ECDSASignature

    init() throws {
        let now = Date()
        ca = try SimulatorCA(validity: now.addingTimeInterval(-86_400)...now.addingTimeInterval(86_400 * 365))
        let signedDate = Timestamp(now)

        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "2000000123456789"
        transaction.originalTransactionId = "2000000123456789"
        transaction.webOrderLineItemId = "2000000098765432"
        transaction.bundleId = "com.example.app"
        transaction.productId = "com.example.app.premium.monthly"
        transaction.subscriptionGroupIdentifier = "21345678"
        transaction.purchaseDate = signedDate
        transaction.originalPurchaseDate = signedDate
        transaction.expiresDate = Timestamp(millisecondsSince1970: signedDate.millisecondsSince1970 + 2_592_000_000)
        transaction.quantity = 1
        transaction.type = .autoRenewable
        transaction.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = signedDate
        transaction.environment = .sandbox
        transaction.transactionReason = .purchase
        transaction.storefront = "USA"
        transaction.storefrontId = "143441"
        transaction.price = 9990
        transaction.currency = "USD"
        transaction.appTransactionId = "704289572311276455"
        transactionJWS = try ca.sign(transaction)

        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = transaction.originalTransactionId
        renewal.productId = transaction.productId
        renewal.autoRenewProductId = transaction.productId
        renewal.autoRenewStatus = .on
        renewal.signedDate = signedDate
        renewal.environment = .sandbox
        renewal.recentSubscriptionStartDate = signedDate
        renewal.renewalDate = transaction.expiresDate
        renewal.renewalPrice = 9990
        renewal.currency = "USD"

        var data = NotificationData()
        data.environment = .sandbox
        data.appAppleId = 1_234_567_890
        data.bundleId = "com.example.app"
        data.bundleVersion = "42"
        data.signedTransactionInfo = transactionJWS
        data.signedRenewalInfo = try ca.sign(renewal)
        data.status = .active
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = .subscribed
        notification.subtype = .initialBuy
        notification.notificationUUID = UUID().uuidString
        notification.version = "2.0"
        notification.signedDate = signedDate
        notification.data = data
        notificationJWS = try ca.sign(notification)

        let parts = transactionJWS.split(separator: ".")
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        signature = try ca.leafKey.signature(for: signingInput)
    }

    func verifier(cache: ChainCache = ChainCache()) throws -> SignedDataVerifier {
        try SignedDataVerifier(.init(rootCertificates: [ca.rootDER], bundleId: "com.example.app", environment: .sandbox), cache: cache)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkSettings.configuration(warmupIterations: 5, scalingFactor: .kilo)

    let fixture: Fixture
    let warm: SignedDataVerifier
    do {
        fixture = try Fixture()
        warm = try fixture.verifier()
    } catch {
        print("benchmark fixtures could not be made: \(error)")
        return
    }

    // The floor: swift-crypto's P-256 verification of the same JWS signing input, nothing else.
    Benchmark("P256.verify.raw") { benchmark in
        let key = fixture.ca.leafKey.publicKey
        for _ in benchmark.scaledIterations {
            blackHole(key.isValidSignature(fixture.signature, for: fixture.signingInput))
        }
    }

    // A transaction JWS with a warm chain cache (the verifier and its cache outlive the samples).
    Benchmark("JWS.verify.cached") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? await warm.verifyTransaction(fixture.transactionJWS))
        }
    }

    // The whole chain on every call, as Apple's library does.
    Benchmark("JWS.verify.uncached", configuration: .init(scalingFactor: .one)) { benchmark in
        let cache = ChainCache()
        guard let verifier = try? fixture.verifier(cache: cache) else { return }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            cache.removeAll()
            blackHole(try? await verifier.verifyTransaction(fixture.transactionJWS))
        }
    }

    // Decoding alone: the transaction payload's JSON into the model, with one shared decoder.
    Benchmark("JSON.decodeTransaction") { benchmark in
        let decoder = JSONDecoder()
        let parts = fixture.transactionJWS.split(separator: ".")
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let json = Data(base64Encoded: base64) else { return }
        for _ in benchmark.scaledIterations {
            blackHole(try? decoder.decode(JWSTransactionDecodedPayload.self, from: json))
        }
    }

    // A real sandbox app receipt (WWDR G5 chain): BER parse, RSA signature, chain to Apple Inc. Root, payload decode.
    Benchmark("Receipt.parseAndVerify", configuration: .init(scalingFactor: .one)) { benchmark in
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/AppStoreTests/Fixtures/receipts/receipt-sandbox-g5")
        guard let text = try? Data(contentsOf: path), let receipt = Data(base64Encoded: text, options: .ignoreUnknownCharacters),
            let verifier = try? ReceiptVerifier()
        else {
            print("the receipt fixture could not be read at \(path.path)")
            return
        }
        let bytes = Array(receipt)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? await verifier.verify(bytes))
        }
    }

    // A notification and its two nested JWS (transaction and renewal info), warm cache.
    Benchmark("Notification.verifyAndDecode") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try? await warm.verifyNotification(fixture.notificationJWS))
        }
    }
}
