import AppStore
import Crypto
import Entitlements
import Foundation
import Storage

/// Turning verified App Store data into stored records, and stored records back into the engine's facts.
enum FactCoding {
    static let encoder = JSONEncoder.sortedKeys
    static let decoder = JSONDecoder()

    static func digest(_ data: Data) -> String {
        Hex.encode(SHA256.hash(data: data).prefix(16))
    }

    /// A transaction that cannot be placed (no transactionId, originalTransactionId or productId) is rejected: the
    /// engine could not use it and storage could not key it.
    static func record(
        _ t: JWSTransactionDecodedPayload, signed: String?, source: TransactionSource, app: String, now: Int64
    ) throws(CoreError) -> TransactionRecord {
        guard let transactionId = t.transactionId, let productId = t.productId else {
            throw .invalidInput(field: "transaction", "the transaction has no transactionId or productId")
        }
        let original = t.originalTransactionId ?? transactionId
        let payload: Data
        do { payload = try encoder.encode(t) } catch { throw .internalError("the transaction does not encode: \(error)") }
        return TransactionRecord(
            appId: app, transactionId: transactionId, version: digest(payload), originalTransactionId: original,
            environment: t.environment?.rawValue ?? "", productId: productId,
            signedDate: t.signedDate?.millisecondsSince1970 ?? t.purchaseDate?.millisecondsSince1970 ?? 0,
            purchaseDate: t.purchaseDate?.millisecondsSince1970, expiresDate: t.expiresDate?.millisecondsSince1970,
            revocationDate: t.revocationDate?.millisecondsSince1970, price: t.price, currency: t.currency,
            source: source, payload: String(decoding: payload, as: UTF8.self), signed: signed, receivedAt: now,
            appTransactionId: t.appTransactionId)
    }

    static func record(
        _ r: JWSRenewalInfoDecodedPayload, signed: String?, app: String, now: Int64
    ) throws(CoreError) -> RenewalInfoRecord? {
        guard let original = r.originalTransactionId else { return nil }
        let payload: Data
        do { payload = try encoder.encode(r) } catch { throw .internalError("the renewal info does not encode: \(error)") }
        return RenewalInfoRecord(
            appId: app, originalTransactionId: original, version: digest(payload), environment: r.environment?.rawValue ?? "",
            signedDate: r.signedDate?.millisecondsSince1970 ?? 0, payload: String(decoding: payload, as: UTF8.self),
            signed: signed, receivedAt: now)
    }

    static func record(_ n: VerifiedNotification, signed: String, app: String, now: Int64) throws(CoreError) -> NotificationRecord {
        let payload = n.payload
        guard let uuid = payload.notificationUUID, let type = payload.notificationType else {
            throw .verification(VerificationError(.invalidJWTFormat, "the notification has no notificationUUID or notificationType"))
        }
        let fact = NotificationFact(n)
        let factJSON: Data
        do { factJSON = try encoder.encode(fact) } catch { throw .internalError("the notification does not encode: \(error)") }
        return NotificationRecord(
            appId: app, notificationUUID: uuid, notificationType: type.rawValue, subtype: payload.subtype?.rawValue,
            environment: payload.appIdentity.environment?.rawValue ?? "",
            signedDate: payload.signedDate?.millisecondsSince1970 ?? now,
            originalTransactionId: n.transactionInfo?.originalTransactionId ?? n.renewalInfo?.originalTransactionId,
            fact: String(decoding: factJSON, as: UTF8.self), signed: signed, receivedAt: now)
    }

    /// The original transactions none of whose transactions (as decoded for storage) carries an appAccountToken.
    static func originalsWithoutAccountToken(_ records: [TransactionRecord]) -> [String] {
        let tokens = accountTokens(records)
        return Set(records.map(\.originalTransactionId)).filter { tokens[$0] == nil }.sorted()
    }

    /// The appAccountToken each original transaction's purchases carry (the latest signed one that carries any).
    static func accountTokens(_ records: [TransactionRecord]) -> [String: String] {
        struct Token: Decodable { var appAccountToken: String? }
        var tokens: [String: (token: String, signedDate: Int64)] = [:]
        for record in records {
            guard let token = try? decoder.decode(Token.self, from: Data(record.payload.utf8)).appAccountToken, !token.isEmpty else {
                continue
            }
            if let known = tokens[record.originalTransactionId], known.signedDate > record.signedDate { continue }
            tokens[record.originalTransactionId] = (token, record.signedDate)
        }
        return tokens.mapValues(\.token)
    }

    /// The engine's facts from what storage holds. A stored fact that no longer decodes is a corrupt row: fail
    /// loudly rather than compute a state without it.
    static func facts(_ stored: StoredFacts) throws(CoreError) -> [Fact] {
        var facts: [Fact] = []
        facts.reserveCapacity(stored.count)
        do {
            for json in stored.transactions {
                facts.append(.transaction(try decoder.decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))))
            }
            for json in stored.renewalInfos {
                facts.append(.renewalInfo(try decoder.decode(JWSRenewalInfoDecodedPayload.self, from: Data(json.utf8))))
            }
            for json in stored.notifications where json != "null" {
                facts.append(.notification(try decoder.decode(NotificationFact.self, from: Data(json.utf8))))
            }
        } catch {
            throw .internalError("a stored fact does not decode: \(DecodingErrorDescription.describe(error))")
        }
        return facts
    }
}
