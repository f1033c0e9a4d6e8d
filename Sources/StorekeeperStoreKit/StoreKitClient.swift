#if canImport(StoreKit)
    import Foundation
    import StoreKit
    import StorekeeperSDK
    #if canImport(UIKit) && !os(watchOS)
        import UIKit
    #endif

    /// The App Store through StoreKit 2, as the SDK sees it. Built on Apple platforms only; on Linux CI type-checks it
    /// against a transcription of Apple's StoreKit interface (`.ci/storekit-check.sh`), as on iOS and as on visionOS.
    ///
    /// Transactions are handed to the SDK with their `jwsRepresentation`, verified or not: the server verifies every one
    /// with Apple's certificate chain, so the device's own check adds nothing and must not drop a purchase. (The app
    /// transaction is the exception: only StoreKit checks it.) Every `Transaction` the adapter hands over is kept until
    /// the SDK finishes it, because `Transaction.unfinished` can be empty right after a purchase.
    ///
    /// Everything it calls exists at the package's floors (iOS 16, macOS 15, tvOS 16, watchOS 9, visionOS 1), so it
    /// carries no availability of its own; the confirming scene is used from iOS 17 and tvOS 17.
    public struct StoreKitClient: StoreClient {
        #if canImport(UIKit) && !os(watchOS)
            /// The scene a purchase is confirmed in: required on visionOS (StoreKit has no purchase without one there),
            /// used from iOS 17 and tvOS 17 when given, so the payment sheet appears over the right window.
            public typealias SceneProvider = @MainActor @Sendable () -> UIScene?
            private let scene: SceneProvider?

            /// A client that confirms purchases in the scene `scene` returns at the time of the purchase (for a SwiftUI
            /// app, the window scene of the view that buys; on visionOS a purchase without one is refused).
            public init(scene: SceneProvider? = nil) {
                self.scene = scene
            }
        #else
            /// A client for platforms without scenes (macOS, watchOS).
            public init() {}
        #endif

        /// The StoreKit transactions handed over and not finished yet, by id.
        private let handedOver = Locked<[String: Transaction]>([:])

        /// The transaction as the SDK sees it, kept so that `finish` can finish this very value.
        func handOver(_ result: VerificationResult<Transaction>) -> StoreTransaction {
            let transaction = result.unsafePayloadValue
            let id = String(transaction.id)
            handedOver.withLock { $0[id] = transaction }
            return StoreTransaction(
                id: id, originalId: String(transaction.originalID), productId: transaction.productID,
                jwsRepresentation: result.jwsRepresentation, verifiedByStore: Self.isVerified(result))
        }

        static func describe(_ result: VerificationResult<Transaction>) -> StoreTransaction {
            let transaction = result.unsafePayloadValue
            return StoreTransaction(
                id: String(transaction.id), originalId: String(transaction.originalID), productId: transaction.productID,
                jwsRepresentation: result.jwsRepresentation, verifiedByStore: isVerified(result))
        }

        /// Whether StoreKit checked Apple's signature on the device.
        static func isVerified(_ result: VerificationResult<Transaction>) -> Bool {
            if case .verified = result { return true }
            return false
        }

        /// `Transaction.updates`, each transaction kept until the SDK finishes it.
        public func transactionUpdates() -> AsyncStream<StoreTransaction> {
            AsyncStream { continuation in
                let task = Task {
                    for await result in Transaction.updates { continuation.yield(handOver(result)) }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        /// `Transaction.unfinished`, each transaction kept until the SDK finishes it.
        public func unfinishedTransactions() async -> [StoreTransaction] {
            var found: [StoreTransaction] = []
            for await result in Transaction.unfinished { found.append(handOver(result)) }
            return found
        }

        /// `Transaction.currentEntitlements`.
        public func currentEntitlements() async -> [StoreTransaction] {
            var found: [StoreTransaction] = []
            for await result in Transaction.currentEntitlements { found.append(Self.describe(result)) }
            return found
        }

        /// Buys with StoreKit: the offer checked first (one StoreKit could not apply is `invalidOffer`, nothing bought),
        /// then `purchase(confirmIn:options:)` in the app's scene where there is one, else `purchase(options:)`.
        public func purchase(
            productId: String, appAccountToken: UUID?, promotionalOffer: PromotionalOfferSignature?
        ) async throws(StorekeeperError) -> StorePurchaseOutcome {
            // The offer first: one StoreKit could not apply is an error before anything is bought.
            var options: Set<Product.PurchaseOption> = []
            if let promotionalOffer { options.formUnion(try Self.options(for: promotionalOffer)) }
            if let appAccountToken { options.insert(.appAccountToken(appAccountToken)) }
            let product: Product
            do {
                guard let found = try await Product.products(for: [productId]).first else {
                    throw StorekeeperError.store("the App Store has no product '\(productId)'")
                }
                product = found
            } catch let error as StorekeeperError {
                throw error
            } catch {
                throw Self.storekeeperError(error)
            }
            let result: Product.PurchaseResult
            do {
                result = try await buy(product, options: options)
            } catch let error as StorekeeperError {
                throw error
            } catch {
                throw Self.storekeeperError(error)
            }
            switch result {
            case .success(let verification): return .purchased(handOver(verification))
            case .userCancelled: return .userCancelled
            case .pending: return .pending
            @unknown default:
                // Not a purchase the SDK can account for: saying "pending" would promise a transaction that may never
                // come. Whatever StoreKit did, its transaction still arrives through `Transaction.updates`.
                throw .store("StoreKit answered the purchase of '\(productId)' with a result this SDK does not know")
            }
        }

        /// StoreKit's purchase call for this platform: in the app's scene where StoreKit takes one (visionOS requires
        /// it), else `purchase(options:)`.
        private func buy(_ product: Product, options: Set<Product.PurchaseOption>) async throws -> Product.PurchaseResult {
            #if os(visionOS)
                guard let scene, let window = await scene() else {
                    throw StorekeeperError.store(
                        "on visionOS a purchase is confirmed in a scene: create the client with StoreKitClient(scene:)")
                }
                return try await product.purchase(confirmIn: window, options: options)
            #elseif canImport(UIKit) && !os(watchOS)
                if #available(iOS 17.0, tvOS 17.0, *), let scene, let window = await scene() {
                    return try await product.purchase(confirmIn: window, options: options)
                }
                return try await product.purchase(options: options)
            #else
                return try await product.purchase(options: options)
            #endif
        }

        /// The purchase options for a promotional offer: the JWS-signed offer where this SDK was built against a
        /// StoreKit that has it (Xcode 26's, whose compiler is Swift 6.2), else the signature.
        static func options(for offer: PromotionalOfferSignature) throws(StorekeeperError) -> Set<Product.PurchaseOption> {
            #if compiler(>=6.2)
                let jwsSupported = true
            #else
                let jwsSupported = false
            #endif
            switch try offer.form(jwsSupported: jwsSupported) {
            case .compactJWS(let offerId, let jws):
                #if compiler(>=6.2)
                    return Set(Product.PurchaseOption.promotionalOffer(offerId, compactJWS: jws))
                #else
                    throw .invalidOffer("the offer '\(offerId)' needs StoreKit's JWS offers (Xcode 26): \(jws.prefix(16))…")
                #endif
            case .signature(let offerId, let keyIdentifier, let nonce, let signature, let timestamp):
                let legacy: any SignatureOfferOptions = StoreKitSignatureOffer()
                return legacy.options(
                    offerId: offerId, keyIdentifier: keyIdentifier, nonce: nonce, signature: signature, timestamp: timestamp)
            }
        }

        /// StoreKit's errors in the SDK's words: a cancelled purchase is `purchaseCancelled`, a network failure
        /// `network`, an offer StoreKit refused `invalidOffer`; the rest `store`.
        static func storekeeperError(_ error: any Error) -> StorekeeperError {
            if let error = error as? StoreKitError {
                switch error {
                case .userCancelled: return .purchaseCancelled
                case .networkError(let underlying): return .network(underlying.localizedDescription)
                default: return .store(error.localizedDescription)
                }
            }
            if let error = error as? Product.PurchaseError {
                switch error {
                case .ineligibleForOffer, .invalidOfferIdentifier, .invalidOfferPrice, .invalidOfferSignature, .missingOfferParameters:
                    return .invalidOffer(error.localizedDescription)
                default: return .store(error.localizedDescription)
                }
            }
            if let error = error as? URLError { return .network(error.localizedDescription) }
            return .store(error.localizedDescription)
        }

        /// Finishes the very `Transaction` handed over, or, for one of an earlier launch, the one in
        /// `Transaction.unfinished`.
        public func finish(_ transaction: StoreTransaction) async {
            if let kept = handedOver.withLock({ $0.removeValue(forKey: transaction.id) }) {
                await kept.finish()
                return
            }
            // Handed over by an earlier launch of the app: StoreKit still lists it as unfinished.
            for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == transaction.id {
                await result.unsafePayloadValue.finish()
            }
        }

        /// `AppStore.sync()` (it may ask for the Apple ID password).
        public func sync() async throws(StorekeeperError) {
            do {
                try await AppStore.sync()
            } catch {
                throw Self.storekeeperError(error)
            }
        }

        /// One `Product.SubscriptionInfo.status(for:)` per subscription group of these products, the groups read from
        /// the device's own transactions (`Transaction.latest(for:)`), so that no App Store request for the products
        /// is needed: offline, StoreKit still answers from what it has.
        public func subscriptionStatuses(productIds: [String]) async -> [StoreSubscriptionStatus] {
            var groups: [String] = []
            for productId in productIds {
                guard let latest = await Transaction.latest(for: productId),
                    let group = latest.unsafePayloadValue.subscriptionGroupID, !groups.contains(group)
                else { continue }
                groups.append(group)
            }
            var found: [StoreSubscriptionStatus] = []
            for group in groups {
                guard let statuses = try? await Product.SubscriptionInfo.status(for: group) else { continue }
                for status in statuses {
                    found.append(
                        StoreSubscriptionStatus(
                            transaction: Self.describe(status.transaction), renewalInfo: status.renewalInfo.jwsRepresentation))
                }
            }
            return found
        }

        /// `AppTransaction.shared` when StoreKit verified it: the app decides on it alone (no server checks it), so
        /// an unverified one is not handed over.
        public func appTransaction() async -> String? {
            guard let result = try? await StoreKit.AppTransaction.shared, case .verified(_) = result else { return nil }
            return result.jwsRepresentation
        }

        /// The environment of StoreKit's app transaction (its `receiptType`, which `AppTransaction.environment` reads);
        /// while there is none (offline at first launch, or not verified), the receipt's name: `sandboxReceipt` for a
        /// TestFlight or App Review build, `receipt` for the App Store's.
        public func environment() async -> CustomerInfo.Environment? {
            if let jws = await appTransaction(), let environment = CustomerInfo.Environment(appTransaction: jws) { return environment }
            switch Bundle.main.appStoreReceiptURL?.lastPathComponent {
            case "sandboxReceipt": return .sandbox
            case "receipt": return .production
            default: return nil
            }
        }
    }

    /// StoreKit 1's signature form of a promotional offer, which StoreKit deprecates from iOS 26 (macOS, tvOS, watchOS and
    /// visionOS 26): used only when the server sent no JWS (it signs one when it knows the offer key's issuer id, and
    /// the JWS form is preferred wherever StoreKit has it). Reached through this protocol so that an app whose
    /// deployment target is iOS 26 builds without a deprecation warning for a form it only falls back to.
    protocol SignatureOfferOptions: Sendable {
        func options(offerId: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int) -> Set<Product.PurchaseOption>
    }

    struct StoreKitSignatureOffer: SignatureOfferOptions {
        @available(*, deprecated, message: "StoreKit's signature form of promotional offers, deprecated from iOS 26: a fallback")
        func options(offerId: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int) -> Set<Product.PurchaseOption> {
            [.promotionalOffer(offerID: offerId, keyID: keyIdentifier, nonce: nonce, signature: signature, timestamp: timestamp)]
        }
    }

    extension Storekeeper {
        /// The SDK on StoreKit 2: `Storekeeper(configuration: .init(apiKey: "pk_…", baseURL: url))`. On visionOS, pass
        /// a client with the app's scene: `Storekeeper(configuration: …, store: StoreKitClient(scene: { … }))`.
        public convenience init(configuration: Configuration) {
            self.init(configuration: configuration, store: StoreKitClient())
        }
    }
#endif
