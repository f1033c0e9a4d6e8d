/// A verified notification with its nested signed data verified and decoded.
public struct VerifiedNotification: Sendable, Hashable, Encodable {
    public var payload: ResponseBodyV2DecodedPayload
    /// `data.signedTransactionInfo`, verified.
    public var transactionInfo: JWSTransactionDecodedPayload?
    /// `data.signedRenewalInfo`, verified.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// `appData.signedAppTransactionInfo`, verified.
    public var appTransactionInfo: AppTransaction?

    public init(
        payload: ResponseBodyV2DecodedPayload,
        transactionInfo: JWSTransactionDecodedPayload? = nil,
        renewalInfo: JWSRenewalInfoDecodedPayload? = nil,
        appTransactionInfo: AppTransaction? = nil
    ) {
        self.payload = payload
        self.transactionInfo = transactionInfo
        self.renewalInfo = renewalInfo
        self.appTransactionInfo = appTransactionInfo
    }

    private enum DecodedKeys: String, CodingKey {
        case data, appData, transactionInfo, renewalInfo, appTransactionInfo
    }

    /// Apple's payload with Apple's field names, with the decoded nested data beside the signed strings:
    /// `data.transactionInfo`, `data.renewalInfo` and `appData.appTransactionInfo`.
    public func encode(to encoder: any Encoder) throws {
        var outer = payload
        outer.data = nil
        outer.appData = nil
        try outer.encode(to: encoder)
        var container = encoder.container(keyedBy: DecodedKeys.self)
        if let data = payload.data {
            try container.encode(
                WithDecoded(
                    signed: data, first: (.transactionInfo, transactionInfo),
                    second: (.renewalInfo, renewalInfo)), forKey: .data)
        }
        if let appData = payload.appData {
            try container.encode(
                WithDecoded(
                    signed: appData, first: (.appTransactionInfo, appTransactionInfo),
                    second: nil as (DecodedKeys, JWSRenewalInfoDecodedPayload?)?), forKey: .appData)
        }
    }

    private struct WithDecoded<Signed: Encodable, First: Encodable, Second: Encodable>: Encodable {
        var signed: Signed
        var first: (DecodedKeys, First?)
        var second: (DecodedKeys, Second?)?

        func encode(to encoder: any Encoder) throws {
            try signed.encode(to: encoder)
            var container = encoder.container(keyedBy: DecodedKeys.self)
            try container.encodeIfPresent(first.1, forKey: first.0)
            if let second { try container.encodeIfPresent(second.1, forKey: second.0) }
        }
    }
}

/// Any of the four kinds of StoreKit signed data, verified.
public enum VerifiedPayload: Sendable, Hashable, Encodable {
    case notification(VerifiedNotification)
    case transaction(JWSTransactionDecodedPayload)
    case renewalInfo(JWSRenewalInfoDecodedPayload)
    case appTransaction(AppTransaction)

    package enum Kind {
        case notification, transaction, renewalInfo, appTransaction
    }

    /// Encodes the payload itself, as Apple names its fields.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .notification(let value): try value.encode(to: encoder)
        case .transaction(let value): try value.encode(to: encoder)
        case .renewalInfo(let value): try value.encode(to: encoder)
        case .appTransaction(let value): try value.encode(to: encoder)
        }
    }
}
