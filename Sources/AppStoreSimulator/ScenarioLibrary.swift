import AppStore
import Foundation

/// The scenarios that ship with the simulator: together they make the App Store send every (type, subtype) pair
/// Apple defines for version 2 notifications, so they double as examples of each.
public enum ScenarioLibrary {
    /// Every (type, subtype) pair of Apple's App Store Server Notifications V2, as `TYPE` or `TYPE/SUBTYPE`.
    public static let applePairs: [String] = [
        "CONSUMPTION_REQUEST",
        "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_CHANGE_RENEWAL_PREF/UPGRADE",
        "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED",
        "DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW/GRACE_PERIOD",
        "DID_RENEW", "DID_RENEW/BILLING_RECOVERY",
        "EXPIRED/BILLING_RETRY", "EXPIRED/PRICE_INCREASE", "EXPIRED/PRODUCT_NOT_FOR_SALE", "EXPIRED/VOLUNTARY",
        "EXTERNAL_PURCHASE_TOKEN/ACTIVE_TOKEN_REMINDER", "EXTERNAL_PURCHASE_TOKEN/CREATED", "EXTERNAL_PURCHASE_TOKEN/UNREPORTED",
        "GRACE_PERIOD_EXPIRED",
        "METADATA_UPDATE", "MIGRATION",
        "OFFER_REDEEMED", "OFFER_REDEEMED/DOWNGRADE", "OFFER_REDEEMED/INITIAL_BUY", "OFFER_REDEEMED/RESUBSCRIBE", "OFFER_REDEEMED/UPGRADE",
        "ONE_TIME_CHARGE",
        "PRICE_CHANGE",
        "PRICE_INCREASE/ACCEPTED", "PRICE_INCREASE/PENDING",
        "REFUND", "REFUND_DECLINED", "REFUND_REVERSED",
        "RENEWAL_EXTENDED", "RENEWAL_EXTENSION/FAILURE", "RENEWAL_EXTENSION/SUMMARY",
        "RESCIND_CONSENT",
        "REVOKE",
        "SUBSCRIBED/INITIAL_BUY", "SUBSCRIBED/RESUBSCRIBE",
        "TEST",
    ]

    /// The library's scenarios, by name.
    public static func all() throws -> [Scenario] {
        let directory = Bundle.module.resourceURL?.appendingPathComponent("Scenarios")
        let names = directory.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) } ?? []
        guard let directory, !names.isEmpty else {
            throw StoreError("the scenario library is missing from the simulator's resources")
        }
        let urls = names.filter { $0.hasSuffix(".json") }.map { directory.appendingPathComponent($0) }
        return try urls.sorted { $0.lastPathComponent < $1.lastPathComponent }.map { url in
            try Scenario.decode(try Data(contentsOf: url), source: url.lastPathComponent)
        }
    }

    public static func named(_ name: String) throws -> Scenario {
        guard let scenario = try all().first(where: { $0.name == name }) else {
            throw StoreError("no scenario '\(name)' in the library; `storekeeper simulate scenarios` lists them")
        }
        return scenario
    }
}
