/// The commitment of a subscription billed in periods under a commitment plan (on a transaction).
public struct CommitmentInfo: Codable, Hashable, Sendable {
    public var billingPeriodNumber: Int32?
    public var commitmentExpiresDate: Timestamp?
    public var commitmentPrice: Int64?
    public var totalBillingPeriods: Int32?

    public init() {}
}
