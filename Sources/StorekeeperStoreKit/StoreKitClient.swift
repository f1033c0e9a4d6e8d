#if canImport(StoreKit)
    import Foundation
    import StoreKit
    import StorekeeperSDK

    /// The App Store through StoreKit 2, as the SDK sees it. Built on Apple platforms only; it cannot be compiled on Linux.
    ///
    /// Transactions are handed to the SDK with their `jwsRepresentation`, verified or not: the server verifies every one
    /// with Apple's certificate chain, so the device's own check adds nothing and must not drop a purchase. (The app
    /// transaction is the exception: only StoreKit checks it.)
    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
    public struct StoreKitClient: StoreClient {
        public init() {}

        static func transaction(_ result: VerificationResult<Transaction>) -> StoreTransaction {
            let transaction = result.unsafePayloadValue
            return StoreTransaction(
                id: String(transaction.id), originalId: String(transaction.originalID), productId: transaction.productID,
                jwsRepresentation: result.jwsRepresentation)
        }

        public func transactionUpdates() -> AsyncStream<StoreTransaction> {
            AsyncStream { continuation in
                let task = Task {
                    for await result in Transaction.updates { continuation.yield(Self.transaction(result)) }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        public func unfinishedTransactions() async -> [StoreTransaction] {
            var found: [StoreTransaction] = []
            for await result in Transaction.unfinished { found.append(Self.transaction(result)) }
            return found
        }

        public func currentEntitlements() async -> [StoreTransaction] {
            var found: [StoreTransaction] = []
            for await result in Transaction.currentEntitlements { found.append(Self.transaction(result)) }
            return found
        }

        public func purchase(
            productId: String, appAccountToken: UUID?, promotionalOffer: PromotionalOfferSignature?
        ) async throws(StorekeeperError) -> StorePurchaseOutcome {
            let product: Product
            do {
                guard let found = try await Product.products(for: [productId]).first else {
                    throw StorekeeperError.store("the App Store has no product '\(productId)'")
                }
                product = found
            } catch let error as StorekeeperError {
                throw error
            } catch {
                throw .store("the product '\(productId)' could not be loaded: \(error.localizedDescription)")
            }
            var options: Set<Product.PurchaseOption> = []
            if let appAccountToken { options.insert(.appAccountToken(appAccountToken)) }
            if let offer = promotionalOffer, let signature = Data(base64Encoded: offer.signature) {
                options.insert(
                    .promotionalOffer(
                        offerID: offer.offerId, keyID: offer.keyIdentifier, nonce: offer.nonce, signature: signature,
                        timestamp: Int(offer.timestamp)))
            }
            let result: Product.PurchaseResult
            do {
                result = try await product.purchase(options: options)
            } catch {
                throw .store(error.localizedDescription)
            }
            switch result {
            case .success(let verification): return .purchased(Self.transaction(verification))
            case .userCancelled: return .userCancelled
            case .pending: return .pending
            @unknown default: return .pending
            }
        }

        public func finish(_ transaction: StoreTransaction) async {
            for await result in Transaction.unfinished where String(result.unsafePayloadValue.id) == transaction.id {
                await result.unsafePayloadValue.finish()
            }
        }

        public func sync() async throws(StorekeeperError) {
            do {
                try await AppStore.sync()
            } catch {
                throw .store(error.localizedDescription)
            }
        }

        /// One `Product.SubscriptionInfo.status` per subscription group of these products (a group's statuses are
        /// the same whichever of its products asks).
        public func subscriptionStatuses(productIds: [String]) async -> [StoreSubscriptionStatus] {
            guard !productIds.isEmpty, let products = try? await Product.products(for: productIds) else { return [] }
            var groups = Set<String>()
            var found: [StoreSubscriptionStatus] = []
            for product in products {
                guard let subscription = product.subscription, groups.insert(subscription.subscriptionGroupID).inserted,
                    let statuses = try? await subscription.status
                else { continue }
                for status in statuses {
                    found.append(
                        StoreSubscriptionStatus(
                            transaction: Self.transaction(status.transaction), renewalInfo: status.renewalInfo.jwsRepresentation))
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
    }

    @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
    extension Storekeeper {
        /// The SDK on StoreKit 2: `Storekeeper(configuration: .init(apiKey: "pk_…", baseURL: url))`.
        public convenience init(configuration: Configuration) {
            self.init(configuration: configuration, store: StoreKitClient())
        }
    }
#endif
