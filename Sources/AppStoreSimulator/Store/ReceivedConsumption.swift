import AppStore

/// What a developer sent with Send Consumption Information for one transaction, as the simulated App Store received it.
public struct ReceivedConsumption: Sendable, Hashable {
    public var customerConsented: Bool
    public var deliveryStatus: PurchaseDeliveryStatus
    public var sampleContentProvided: Bool
    public var consumptionPercentage: Int32?
    public var refundPreference: RefundPreference?
    /// When it arrived (the simulator's clock).
    public var receivedAt: Int64

    public init(
        customerConsented: Bool, deliveryStatus: PurchaseDeliveryStatus, sampleContentProvided: Bool,
        consumptionPercentage: Int32?, refundPreference: RefundPreference?, receivedAt: Int64
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
        self.receivedAt = receivedAt
    }
}
