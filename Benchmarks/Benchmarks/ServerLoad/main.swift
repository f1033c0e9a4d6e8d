import AppStore
import AppStoreSimulator
import Foundation

// Writes the load for `Benchmarks/server.sh`: App Store Server Notifications V2 signed by a fresh simulator CA
// (`root.der`, which the benchmark app trusts), one JSON body per line (`payloads.txt`), and the customers' app user
// ids (`users.txt`). Each customer subscribes, then renews `renewals` times: every notification is new to the server.
// Also Apple's Get Retention Message requests about the first 1,000 customers (`retention.txt`, below).
//
// Usage: ServerLoad <out-dir> <customers> <renewals> <bundle-id>

let arguments = CommandLine.arguments
guard arguments.count == 5, let customers = Int(arguments[2]), let renewals = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ServerLoad <out-dir> <customers> <renewals> <bundle-id>\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[1])
let bundleId = arguments[4]
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let ca = try SimulatorCA(
    name: "Storekeeper Load", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
try Data(ca.rootDER).write(to: directory.appendingPathComponent("root.der"))

let day: Int64 = 86_400_000
// Purchases start a little before now, so that the last renewal is current when the benchmark reads the customers.
let start = Int64(Date().timeIntervalSince1970 * 1000) - Int64(renewals) * 30 * day - day

var lines: [String] = []
var users: [String] = []
lines.reserveCapacity(customers * (renewals + 1))
for c in 0..<customers {
    let token = UUID().uuidString.lowercased()
    users.append(token)
    let original = String(3_000_000_000 + c * 1000)
    for n in 0...renewals {
        var t = JWSTransactionDecodedPayload()
        t.transactionId = n == 0 ? original : String(3_000_000_000 + c * 1000 + n)
        t.originalTransactionId = original
        t.productId = "pro.monthly"
        t.bundleId = bundleId
        let purchase = start + Int64(n) * 30 * day
        t.purchaseDate = Timestamp(millisecondsSince1970: purchase)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: start)
        t.expiresDate = Timestamp(millisecondsSince1970: purchase + 30 * day)
        t.signedDate = Timestamp(millisecondsSince1970: purchase)
        t.type = .autoRenewable
        t.inAppOwnershipType = .purchased
        t.environment = .sandbox
        t.appAccountToken = token
        t.price = 9990
        t.currency = "USD"
        t.storefront = "USA"
        t.transactionReason = n == 0 ? .purchase : .renewal
        var r = JWSRenewalInfoDecodedPayload()
        r.originalTransactionId = original
        r.productId = "pro.monthly"
        r.autoRenewProductId = "pro.monthly"
        r.autoRenewStatus = .on
        r.signedDate = t.signedDate
        r.environment = .sandbox
        var data = NotificationData()
        data.bundleId = bundleId
        data.environment = .sandbox
        data.signedTransactionInfo = try ca.sign(t)
        data.signedRenewalInfo = try ca.sign(r)
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = n == 0 ? .subscribed : .didRenew
        payload.subtype = n == 0 ? .initialBuy : nil
        payload.notificationUUID = UUID().uuidString.lowercased()
        payload.version = "2.0"
        payload.signedDate = t.signedDate
        payload.data = data
        lines.append("{\"signedPayload\":\"\(try ca.sign(payload))\"}")
    }
}
// The retention load: the first (at most) 1,000 customers' subscriptions (`retention-subscribe.txt`, their first
// notifications, to make sure the server knows them), and thirty rounds of requests over them, each request new.
let retentionCustomers = min(customers, 1000)
var retention: [String] = []
for _ in 0..<30 {
    for c in 0..<retentionCustomers {
        var request = DecodedRealtimeRequestBody()
        request.originalTransactionId = String(3_000_000_000 + c * 1000)
        request.productId = "pro.monthly"
        request.userLocale = c % 3 == 0 ? "de-DE" : "en-US"
        request.requestIdentifier = UUID().uuidString.lowercased()
        request.environment = .sandbox
        request.signedDate = Timestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000))
        retention.append("{\"signedPayload\":\"\(try ca.sign(request))\"}")
    }
}
let subscriptions = (0..<retentionCustomers).map { lines[$0 * (renewals + 1)] }
try (lines.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("payloads.txt"), atomically: true, encoding: .utf8)
try (retention.joined(separator: "\n") + "\n").write(
    to: directory.appendingPathComponent("retention.txt"), atomically: true, encoding: .utf8)
try (subscriptions.joined(separator: "\n") + "\n").write(
    to: directory.appendingPathComponent("retention-subscribe.txt"), atomically: true, encoding: .utf8)
try (users.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("users.txt"), atomically: true, encoding: .utf8)
print("wrote \(lines.count) notifications for \(customers) customers to \(directory.path)")
