// StoreKit 2's interface, for type-checking Sources/StorekeeperStoreKit on Linux (.ci/storekit-check.sh).
//
// Transcribed by hand from Apple's published interface of the iOS 26.0 SDK:
//   iPhoneOS26.0.sdk/System/Library/Frameworks/StoreKit.framework/Modules/StoreKit.swiftmodule/arm64e-apple-ios.swiftinterface
//   (swift-compiler-version: Apple Swift 6.2, -user-module-version 815.0.48), read in the public SDK mirror
//   github.com/SunnyM00n/iOS-SDKs.
// Names, argument labels, types, effects (async, throws), isolation (@MainActor), Sendable conformances and
// availability are Apple's; bodies are `fatalError()` (nothing here ever runs) and `@usableFromInline` storage is left
// out. Only the declarations the adapter uses, and the types they need, are here.
//
// Availability on Linux is not checked by the compiler, so what visionOS marks unavailable is declared a second time,
// `@available(*, unavailable)`, when compiled with `-D STOREKIT_AS_VISIONOS`: the adapter must type-check that way too.

import Foundation
import UIKit

// MARK: - VerificationResult

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
@frozen public enum VerificationResult<SignedType> {
    case unverified(SignedType, StoreKit.VerificationResult<SignedType>.VerificationError)
    case verified(SignedType)
    public var payloadValue: SignedType {
        get throws { fatalError() }
    }
    public var unsafePayloadValue: SignedType {
        fatalError()
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult {
    public enum VerificationError: Swift.Error {
        case revokedCertificate
        case invalidCertificateChain
        case invalidDeviceVerification
        case invalidEncoding
        case invalidSignature
        case missingRequiredProperties
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult: Swift.Equatable where SignedType: Swift.Equatable {
    public static func == (a: StoreKit.VerificationResult<SignedType>, b: StoreKit.VerificationResult<SignedType>) -> Swift.Bool {
        fatalError()
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult: Swift.Hashable where SignedType: Swift.Hashable {
    public func hash(into hasher: inout Swift.Hasher) { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult: Swift.Sendable where SignedType: Swift.Sendable {}

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
extension StoreKit.VerificationResult where SignedType == StoreKit.AppTransaction {
    public var jwsRepresentation: Swift.String { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult where SignedType == StoreKit.Transaction {
    public var jwsRepresentation: Swift.String { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.VerificationResult where SignedType == StoreKit.Product.SubscriptionInfo.RenewalInfo {
    public var jwsRepresentation: Swift.String { fatalError() }
}

// MARK: - AppTransaction

@available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *)
public struct AppTransaction: Swift.Sendable {
    public let appVersion: Swift.String
    public let bundleID: Swift.String
    public let originalAppVersion: Swift.String
    public let originalPurchaseDate: Foundation.Date
    public static var shared: StoreKit.VerificationResult<StoreKit.AppTransaction> {
        get async throws { fatalError() }
    }
    public static func refresh() async throws -> StoreKit.VerificationResult<StoreKit.AppTransaction> { fatalError() }
}

// MARK: - Transaction

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Transaction: Swift.Identifiable {
    public let id: Swift.UInt64
    public let originalID: Swift.UInt64
    public let webOrderLineItemID: Swift.String?
    public let productID: Swift.String
    public let subscriptionGroupID: Swift.String?
    public let appBundleID: Swift.String
    public let purchaseDate: Foundation.Date
    public let originalPurchaseDate: Foundation.Date
    public let expirationDate: Foundation.Date?
    public let purchasedQuantity: Swift.Int
    public let isUpgraded: Swift.Bool
    public let revocationDate: Foundation.Date?
    public let appAccountToken: Foundation.UUID?
    public let signedDate: Foundation.Date
    public func finish() async { fatalError() }
    @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
    public typealias ID = Swift.UInt64
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction {
    public struct Transactions: _Concurrency.AsyncSequence {
        public typealias Element = StoreKit.VerificationResult<StoreKit.Transaction>
        public struct AsyncIterator: _Concurrency.AsyncIteratorProtocol {
            public mutating func next() async -> StoreKit.VerificationResult<StoreKit.Transaction>? { fatalError() }
            @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
            public typealias Element = StoreKit.VerificationResult<StoreKit.Transaction>
        }
        public func makeAsyncIterator() -> StoreKit.Transaction.Transactions.AsyncIterator { fatalError() }
    }
    public static var all: StoreKit.Transaction.Transactions { fatalError() }
    public static var currentEntitlements: StoreKit.Transaction.Transactions { fatalError() }
    public static func latest(for productID: Swift.String) async -> StoreKit.VerificationResult<StoreKit.Transaction>? {
        fatalError()
    }
    public static var unfinished: StoreKit.Transaction.Transactions { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction {
    public static var updates: StoreKit.Transaction.Transactions { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction: Swift.Equatable {
    public static func == (lhs: StoreKit.Transaction, rhs: StoreKit.Transaction) -> Swift.Bool { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction: Swift.Hashable {
    public func hash(into hasher: inout Swift.Hasher) { fatalError() }
}

@available(iOS 15.0, macCatalyst 15.0, tvOS 15.0, macOS 12.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction: Swift.Sendable {}

@available(iOS 15.0, macCatalyst 15.0, tvOS 15.0, macOS 12.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Transaction.Transactions: Swift.Sendable {}

// MARK: - Product

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public struct Product: Swift.Identifiable {
    public struct ProductType: Swift.RawRepresentable, Swift.Equatable, Swift.Hashable {
        public let rawValue: Swift.String
        public init(rawValue: Swift.String) { self.rawValue = rawValue }
        @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
        public typealias RawValue = Swift.String
    }
    public let id: Swift.String
    public let type: StoreKit.Product.ProductType
    public let displayName: Swift.String
    public let description: Swift.String
    public let price: Foundation.Decimal
    public let displayPrice: Swift.String
    public let isFamilyShareable: Swift.Bool
    public let subscription: StoreKit.Product.SubscriptionInfo?
    @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
    public typealias ID = Swift.String
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product {
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [StoreKit.Product]
    where Identifiers: Swift.Collection, Identifiers.Element == Swift.String { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product: Swift.Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.ProductType: Swift.Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product {
    public struct PurchaseOption: Swift.Equatable, Swift.Hashable, Swift.Sendable {
        public static func appAccountToken(_ token: Foundation.UUID) -> StoreKit.Product.PurchaseOption { fatalError() }
        public static func custom(key: Swift.String, value: Swift.String) -> StoreKit.Product.PurchaseOption { fatalError() }
        @available(iOS, introduced: 15.0, deprecated: 26.0, message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead")
        @available(macOS, introduced: 12.0, deprecated: 26.0, message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead")
        @available(tvOS, introduced: 15.0, deprecated: 26.0, message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead")
        @available(watchOS, introduced: 8.0, deprecated: 26.0, message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead")
        @available(visionOS, introduced: 1.0, deprecated: 26.0, message: "Sign promotional offers with JWS and use promotionalOffer(_:compactJWS:) instead")
        public static func promotionalOffer(
            offerID: Swift.String, keyID: Swift.String, nonce: Foundation.UUID, signature: Foundation.Data, timestamp: Swift.Int
        ) -> StoreKit.Product.PurchaseOption { fatalError() }
        // In the interface: @backDeployed(before: iOS 19.0, macOS 16.0, tvOS 19.0, watchOS 12.0, visionOS 3.0), with an
        // inlinable body of two `custom` options; back-deployment means nothing to a type-check on Linux.
        @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
        public static func promotionalOffer(_ offerID: Swift.String, compactJWS: Swift.String) -> [StoreKit.Product.PurchaseOption] {
            fatalError()
        }
        public static func quantity(_ quantity: Swift.Int) -> StoreKit.Product.PurchaseOption { fatalError() }
        public static func simulatesAskToBuyInSandbox(_ simulateAskToBuy: Swift.Bool) -> StoreKit.Product.PurchaseOption { fatalError() }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product {
    public enum PurchaseResult {
        case success(StoreKit.VerificationResult<StoreKit.Transaction>)
        case userCancelled
        case pending
    }
    public enum PurchaseError: Swift.Error {
        case invalidQuantity
        case productUnavailable
        case purchaseNotAllowed
        case ineligibleForOffer
        case invalidOfferIdentifier
        case invalidOfferPrice
        case invalidOfferSignature
        case missingOfferParameters
    }
    #if STOREKIT_AS_VISIONOS
        @available(*, unavailable, message: "visionOS: purchase(options:) is unavailable; use purchase(confirmIn:options:)")
        @_Concurrency.MainActor public func purchase(options: Swift.Set<StoreKit.Product.PurchaseOption> = []) async throws
            -> StoreKit.Product.PurchaseResult
        { fatalError() }
    #else
        @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
        @available(visionOS, unavailable)
        @_Concurrency.MainActor public func purchase(options: Swift.Set<StoreKit.Product.PurchaseOption> = []) async throws
            -> StoreKit.Product.PurchaseResult
        { fatalError() }
    #endif
    @available(iOS 17.0, tvOS 17.0, macCatalyst 17.0, visionOS 1.0, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    @_Concurrency.MainActor public func purchase(
        confirmIn scene: some UIKit.UIScene, options: Swift.Set<StoreKit.Product.PurchaseOption> = []
    ) async throws -> StoreKit.Product.PurchaseResult { fatalError() }
    @available(iOS 18.2, tvOS 18.2, macCatalyst 18.2, visionOS 2.2, *)
    @available(macOS, unavailable)
    @available(watchOS, unavailable)
    public func purchase(
        confirmIn viewController: UIKit.UIViewController, options: Swift.Set<StoreKit.Product.PurchaseOption> = []
    ) async throws -> StoreKit.Product.PurchaseResult { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.PurchaseResult: Swift.Sendable {}

// MARK: - Subscriptions

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product {
    public struct SubscriptionInfo: Swift.Equatable, Swift.Hashable {
        public let subscriptionGroupID: Swift.String
        public static func isEligibleForIntroOffer(for groupID: Swift.String) async -> Swift.Bool { fatalError() }
    }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo: Swift.Sendable {}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo {
    public struct RenewalState: Swift.RawRepresentable, Swift.Equatable, Swift.Hashable {
        public let rawValue: Swift.Int
        public init(rawValue: Swift.Int) { self.rawValue = rawValue }
        @available(iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macOS 12.0, *)
        public typealias RawValue = Swift.Int
    }
    public struct RenewalInfo {
        public let originalTransactionID: Swift.UInt64
        public let currentProductID: Swift.String
        public let willAutoRenew: Swift.Bool
        public let isInBillingRetry: Swift.Bool
        public let gracePeriodExpirationDate: Foundation.Date?
        public let signedDate: Foundation.Date
    }
    public struct Status: Swift.Equatable, Swift.Hashable {
        public let state: StoreKit.Product.SubscriptionInfo.RenewalState
        public let transaction: StoreKit.VerificationResult<StoreKit.Transaction>
        public let renewalInfo: StoreKit.VerificationResult<StoreKit.Product.SubscriptionInfo.RenewalInfo>
    }
    @inlinable public var status: [StoreKit.Product.SubscriptionInfo.Status] {
        get async throws { try await Product.SubscriptionInfo.status(for: subscriptionGroupID) }
    }
    public static func status(for groupID: Swift.String) async throws -> [StoreKit.Product.SubscriptionInfo.Status] { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo.RenewalState: Swift.Sendable {}
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo.Status: Swift.Sendable {}
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo.RenewalInfo: Swift.Sendable {}
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo.RenewalInfo: Swift.Equatable {
    public static func == (lhs: StoreKit.Product.SubscriptionInfo.RenewalInfo, rhs: StoreKit.Product.SubscriptionInfo.RenewalInfo) -> Swift.Bool {
        fatalError()
    }
}
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.Product.SubscriptionInfo.RenewalInfo: Swift.Hashable {
    public func hash(into hasher: inout Swift.Hasher) { fatalError() }
}

// MARK: - AppStore

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum AppStore {
    public static var canMakePayments: Swift.Bool { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.AppStore {
    public static func sync() async throws { fatalError() }
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.AppStore: Swift.Sendable {}

// MARK: - Errors

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
public enum StoreKitError: Swift.Error {
    case unknown
    case userCancelled
    case networkError(Foundation.URLError)
    case systemError(any Swift.Error)
    case notAvailableInStorefront
    @available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, visionOS 1.0, *)
    case notEntitled
    @available(iOS 18.4, macOS 15.4, tvOS 18.4, watchOS 11.4, visionOS 2.4, *)
    case unsupported
}

@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, *)
extension StoreKit.StoreKitError: Swift.Sendable {}
