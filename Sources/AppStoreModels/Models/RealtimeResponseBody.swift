import Foundation

/// The answer of a Get Retention Message endpoint (Apple's `RealtimeResponseBody`): at most one of a message, an
/// alternate product (switch plan) or a promotional offer, each naming an approved message. An empty body lets Apple
/// show the default message configured for the product and locale, if any.
public struct RealtimeResponseBody: Codable, Hashable, Sendable {
    /// A message alone (Apple's `Message`).
    public struct Message: Codable, Hashable, Sendable {
        public var messageIdentifier: String

        public init(messageIdentifier: String) { self.messageIdentifier = messageIdentifier }
    }

    /// A message that offers a switch to another product of the subscription group (Apple's `AlternateProduct`).
    public struct AlternateProduct: Codable, Hashable, Sendable {
        public var messageIdentifier: String
        public var productId: String
        /// `MONTHLY` for a 12-month commitment billed monthly; absent: the product's usual plan.
        public var billingPlanType: String?

        public init(messageIdentifier: String, productId: String, billingPlanType: String? = nil) {
            self.messageIdentifier = messageIdentifier
            self.productId = productId
            self.billingPlanType = billingPlanType
        }
    }

    /// A message with a promotional offer signed by the developer (Apple's `PromotionalOffer`, with its V2 JWS).
    public struct PromotionalOffer: Codable, Hashable, Sendable {
        public var messageIdentifier: String
        public var promotionalOfferSignatureV2: String

        public init(messageIdentifier: String, promotionalOfferSignatureV2: String) {
            self.messageIdentifier = messageIdentifier
            self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
        }
    }

    public var message: Message?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: PromotionalOffer?

    public init(message: Message? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: PromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }

    /// The message the answer shows, whichever kind it is; nil for an empty answer.
    public var messageIdentifier: String? {
        message?.messageIdentifier ?? alternateProduct?.messageIdentifier ?? promotionalOffer?.messageIdentifier
    }
}
