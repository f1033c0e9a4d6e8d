import Foundation

/// A legacy `SKPaymentTransaction.transactionReceipt` (iOS 6 and earlier, still sent by some StoreKit 1 apps):
/// base64 of an old-style (NeXTSTEP) property list whose `purchase-info` is itself a base64 property list.
///
/// Apple never documented the format of its `signature` field, so these receipts cannot be verified locally:
/// `signatureVerified` is always false, and only verifyReceipt or the App Store Server API can confirm the
/// transaction. What this type gives is the transaction id to look up.
public struct LegacyTransactionReceipt: Hashable, Sendable, Encodable {
    /// The fields of `purchase-info`, such as `transaction-id`, `product-id` and `purchase-date-ms`.
    public var purchaseInfo: [String: String]
    public var transactionId: String? { purchaseInfo["transaction-id"] }
    public let signatureVerified = false

    enum CodingKeys: String, CodingKey {
        case transactionId = "transaction_id"
        case purchaseInfo = "purchase_info"
        case signatureVerified = "signature_verified"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(transactionId, forKey: .transactionId)
        try c.encode(purchaseInfo, forKey: .purchaseInfo)
        try c.encode(signatureVerified, forKey: .signatureVerified)
    }

    /// Parses the base64 text of a legacy receipt.
    public init(base64 input: [UInt8]) throws(VerificationError) {
        let text = input.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard text.count <= 1 << 20, let outer = Base64.decode(text, alphabet: .standard),
            let outerPlist = OldStylePlist.dictionary(outer)
        else {
            throw .receiptFormat("the input is not a base64 legacy transaction receipt")
        }
        guard let info = outerPlist["purchase-info"], let inner = Base64.decode(info, alphabet: .standard),
            let purchaseInfo = OldStylePlist.dictionary(inner)
        else {
            throw .receiptFormat("the legacy receipt has no readable purchase-info")
        }
        self.purchaseInfo = purchaseInfo
    }
}

/// A reader for the flat `{ "key" = "value"; … }` dictionaries of old-style property lists.
enum OldStylePlist {
    static func dictionary(_ bytes: [UInt8]) -> [String: String]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }
        func token() -> String? {
            skipSpace()
            guard index < bytes.count else { return nil }
            var out: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                    out.append(bytes[index])
                    index += 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            } else {
                while index < bytes.count, !"=;{} \n\t\r\"".utf8.contains(bytes[index]) {
                    out.append(bytes[index])
                    index += 1
                }
                guard !out.isEmpty else { return nil }
            }
            return String(validating: out, as: UTF8.self)
        }
        func expect(_ char: Character) -> Bool {
            skipSpace()
            guard index < bytes.count, let ascii = char.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        guard expect("{") else { return nil }
        var result: [String: String] = [:]
        while true {
            if expect("}") { break }
            guard let key = token(), expect("="), let value = token(), expect(";") else { return nil }
            result[key] = value
        }
        skipSpace()
        return index == bytes.count ? result : nil
    }
}
