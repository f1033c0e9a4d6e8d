import SwiftASN1

/// Decodes the signed payload of an app receipt: a SET of `ReceiptAttribute ::= SEQUENCE { type INTEGER,
/// version INTEGER, value OCTET STRING }`, whose values are themselves DER (UTF8String, IA5String dates, INTEGER),
/// with the in-app purchases (type 17) nested the same way. An empty string means the field is absent.
enum ReceiptPayload {
    static func decode(_ bytes: [UInt8], maxInAppEntries: Int) throws(VerificationError) -> AppReceipt {
        var receipt = AppReceipt()
        do {
            for (type, value) in try attributes(bytes) {
                switch type {
                case 0: receipt.receiptType = try string(value)
                case 1: receipt.appItemId = try integer(value)
                case 2:
                    receipt.bundleId = try string(value)
                    receipt.bundleIdDER = Array(value)
                case 3: receipt.applicationVersion = try string(value)
                case 4: receipt.opaqueValue = Array(value)
                case 5: receipt.sha1Hash = Array(value)
                case 12: receipt.receiptCreationDate = try date(value)
                case 18: receipt.originalPurchaseDate = try date(value)
                case 19: receipt.originalApplicationVersion = try string(value)
                case 21: receipt.expirationDate = try date(value)
                case 17:
                    guard receipt.inApp.count < maxInAppEntries else {
                        throw Invalid(reason: "the receipt holds more than \(maxInAppEntries) in-app purchases")
                    }
                    receipt.inApp.append(try inAppPurchase(Array(value)))
                default: continue
                }
            }
        } catch let error as Invalid {
            throw .receiptFormat("the receipt payload is malformed: \(error.reason)")
        } catch {
            throw .receiptFormat("the receipt payload is not valid ASN.1: \(error)")
        }
        return receipt
    }

    static func inAppPurchase(_ bytes: [UInt8]) throws -> InAppPurchaseReceipt {
        var purchase = InAppPurchaseReceipt()
        for (type, value) in try attributes(bytes) {
            switch type {
            case 1701: purchase.quantity = try integer(value)
            case 1702: purchase.productId = try string(value)
            case 1703: purchase.transactionId = try string(value)
            case 1704: purchase.purchaseDate = try date(value)
            case 1705: purchase.originalTransactionId = try string(value)
            case 1706: purchase.originalPurchaseDate = try date(value)
            case 1708: purchase.expiresDate = try date(value)
            case 1711: purchase.webOrderLineItemId = try integer(value).map(String.init)
            case 1712: purchase.cancellationDate = try date(value)
            case 1713: purchase.isTrialPeriod = try integer(value).map { $0 != 0 }
            case 1719: purchase.isInIntroOfferPeriod = try integer(value).map { $0 != 0 }
            case 1721: purchase.promotionalOfferId = try string(value)
            default: continue
            }
        }
        return purchase
    }

    struct Invalid: Error {
        var reason: String
    }

    /// The (type, value) pairs of a SET of ReceiptAttribute.
    static func attributes(_ bytes: [UInt8]) throws -> [(Int64, ArraySlice<UInt8>)] {
        let root = try BER.parse(bytes)
        guard root.identifier == .set, case .constructed(let nodes) = root.content else {
            throw Invalid(reason: "the payload is not a SET")
        }
        var result: [(Int64, ArraySlice<UInt8>)] = []
        for node in nodes {
            guard node.identifier == .sequence, case .constructed(let fields) = node.content else {
                throw Invalid(reason: "an attribute is not a SEQUENCE")
            }
            var iterator = fields.makeIterator()
            guard let typeNode = iterator.next(), let versionNode = iterator.next(), let valueNode = iterator.next(),
                typeNode.identifier == .integer, versionNode.identifier == .integer
            else { throw Invalid(reason: "an attribute lacks its type, version or value") }
            let type = try Int64(berEncoded: typeNode)
            result.append((type, try ASN1OctetString(berEncoded: valueNode).bytes))
        }
        return result
    }

    /// A UTF8String, IA5String or other string type; nil when empty.
    static func string(_ value: ArraySlice<UInt8>) throws -> String? {
        guard !value.isEmpty else { return nil }
        let node = try BER.parse(value)
        guard case .primitive(let content) = node.content else { throw Invalid(reason: "a string field is constructed") }
        switch node.identifier {
        case .utf8String, .ia5String, .printableString, .visibleString:
            guard let text = String(validating: content, as: UTF8.self) else {
                throw Invalid(reason: "a string field is not UTF-8")
            }
            return text.isEmpty ? nil : text
        default:
            throw Invalid(reason: "a string field has ASN.1 tag \(node.identifier)")
        }
    }

    static func integer(_ value: ArraySlice<UInt8>) throws -> Int64? {
        guard !value.isEmpty else { return nil }
        let node = try BER.parse(value)
        guard node.identifier == .integer else { throw Invalid(reason: "an integer field has ASN.1 tag \(node.identifier)") }
        return try Int64(berEncoded: node)
    }

    static func date(_ value: ArraySlice<UInt8>) throws -> Timestamp? {
        guard let text = try string(value) else { return nil }
        guard let date = ReceiptDate.parse(text) else { throw Invalid(reason: "'\(text)' is not an RFC 3339 date") }
        return date
    }
}
