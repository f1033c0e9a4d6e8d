import AppStore
import Storage

/// The body of Send Consumption Information for one refund request, within Apple's constraints: consent always true (it
/// is sent only with it), no `consumptionPercentage` for an auto-renewable subscription, 0 when the purchase was not
/// delivered, and `GRANT_PRORATED` for other products only with a share strictly between 0 and 100%.
struct ConsumptionAnswer: Sendable, Hashable {
    var request: ConsumptionRequest
    /// The preference sent, which may differ from the one decided (`note` says why).
    var preference: RefundPreference?
    var note: String?

    init(
        preference decided: RefundPreference?, productType: ProductType?, report: ConsumptionReportRecord?, sampleContentProvided: Bool
    ) {
        let delivery = report?.deliveryStatus.map(PurchaseDeliveryStatus.init(rawValue:)) ?? .delivered
        var percentage: Int?
        if productType != .autoRenewable {
            percentage = delivery == .delivered ? report?.consumptionPercentage : 0
        }
        var preference = decided
        if decided == .grantProrated, productType != .autoRenewable, !(1..<100_000).contains(percentage ?? 0) {
            preference = nil
            note =
                "GRANT_PRORATED needs the share consumed (between 0 and 100%, exclusive), which the app did not report: sent without a preference"
        }
        self.preference = preference
        request = ConsumptionRequest(
            customerConsented: true, deliveryStatus: delivery,
            sampleContentProvided: report?.sampleContentProvided ?? sampleContentProvided,
            consumptionPercentage: percentage.map { Int32(clamping: $0) }, refundPreference: preference)
    }
}
