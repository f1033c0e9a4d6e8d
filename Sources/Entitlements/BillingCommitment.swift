import AppStoreModels

/// A subscription billed monthly under a commitment (App Store Server API 1.21: a transaction's `billingPlanType`
/// `MONTHLY` and its `commitmentInfo`), such as a year's subscription paid in twelve monthly payments.
///
/// Each monthly payment is a transaction of its own, paying for its month: access follows the months paid, as for any
/// renewal. The customer has committed to every billing period of the commitment, so the subscription renews until
/// its last period whatever its auto-renew status says; that status (and the renewal info's
/// `commitmentAutoRenewStatus`) decides whether a new commitment follows.
public struct BillingCommitment: Codable, Hashable, Sendable {
    /// The billing period this transaction pays for: 1 to `totalBillingPeriods`.
    public var billingPeriodNumber: Int32
    public var totalBillingPeriods: Int32
    /// When the commitment ends.
    public var expiresDate: Timestamp?
    /// Whether a new commitment follows when this one ends (on a subscription's state; `nil` on a purchase, or when
    /// nothing has told).
    public var willRenew: Bool?

    public init(billingPeriodNumber: Int32, totalBillingPeriods: Int32, expiresDate: Timestamp?, willRenew: Bool? = nil) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.expiresDate = expiresDate
        self.willRenew = willRenew
    }

    /// The commitment a transaction pays into; `nil` for one billed otherwise (up front, or no plan).
    init?(_ transaction: borrowing JWSTransactionDecodedPayload) {
        guard transaction.billingPlanType == Self.monthly, let info = transaction.commitmentInfo,
            let number = info.billingPeriodNumber, let total = info.totalBillingPeriods, number >= 1, total >= number
        else { return nil }
        self.init(billingPeriodNumber: number, totalBillingPeriods: total, expiresDate: info.commitmentExpiresDate)
    }

    /// Apple's `billingPlanType` for a commitment paid month by month.
    public static let monthly = "MONTHLY"

    /// Billing periods of the commitment remain after this one: the subscription renews whatever auto-renew says.
    public var periodsRemain: Bool { billingPeriodNumber < totalBillingPeriods }

    /// The first billing period of a commitment.
    var begins: Bool { billingPeriodNumber == 1 }

    /// The last billing period of a commitment.
    var isLast: Bool { billingPeriodNumber == totalBillingPeriods }
}
