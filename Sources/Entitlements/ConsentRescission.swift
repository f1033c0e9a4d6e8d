import AppStoreModels

/// A parent or guardian withdrew consent for a minor's use of the app (Apple's `RESCIND_CONSENT`): the access the
/// customer's purchases gave is withheld from then on, while Apple's own view of them (a subscription's status, its
/// renewals, the money) stays as Apple reports it.
///
/// Apple names the customer by app transaction, which their transactions carry (`appTransactionId`). A purchase begun
/// before the rescission is withheld from it on; a subscription stays withheld through its renewals, and gives access
/// again from a new purchase after the rescission (a resubscription, `transactionReason` `PURCHASE`), which needs a
/// parent's consent again, as does any purchase made after it.
public struct ConsentRescission: Codable, Hashable, Sendable {
    /// When consent was withdrawn: the notification's signing date (the earliest, if Apple sent more than one).
    public var rescindedAt: Timestamp
    /// The subscriptions (original transaction ids) and one-time purchases (transaction ids) whose access is withheld.
    public var withheld: [String]

    public init(rescindedAt: Timestamp, withheld: [String]) {
        self.rescindedAt = rescindedAt
        self.withheld = withheld
    }
}

/// The purchases whose access a rescission of consent withholds at the instant evaluated, and since when.
struct WithheldAccess {
    private var ids: [String] = []
    private var earliest: Int64?

    mutating func add(_ id: String, since rescinded: Int64) {
        ids.append(id)
        earliest = min(earliest ?? rescinded, rescinded)
    }

    /// The state's account of it: nil when nothing is withheld.
    var rescission: ConsentRescission? {
        earliest.map { ConsentRescission(rescindedAt: Timestamp(millisecondsSince1970: $0), withheld: ids.sorted()) }
    }
}

extension FactSet {
    /// The earliest `RESCIND_CONSENT` of each app transaction.
    static func rescissions(_ notifications: [NotificationFact]) -> [String: NotificationFact] {
        var earliest: [String: NotificationFact] = [:]
        for notification in notifications where notification.notificationType == .rescindConsent {
            guard let appTransaction = notification.appTransactionId else { continue }
            if let known = earliest[appTransaction], !Canonical.precedes(notification, known) { continue }
            earliest[appTransaction] = notification
        }
        return earliest
    }
}

extension Evaluator {
    /// The rescission that reached the purchases of `original` (begun at `start`), if any: its app transaction's
    /// `RESCIND_CONSENT`, signed after the purchase began.
    func rescission(of original: String, start: Int64) -> NotificationFact? {
        guard !facts.rescissions.isEmpty, let appTransaction = facts.appTransactions[original],
            let rescission = facts.rescissions[appTransaction],
            start <= rescission.signedDate.millisecondsSince1970
        else { return nil }
        return rescission
    }

    /// When the access of the purchases of `original` (begun at `start`) stopped for a rescission, if it is withheld at
    /// `t`: the rescission came at or before `t`, and (for a subscription, `chain`) no new purchase began after it.
    func withheld(original: String, start: Int64, chain: Int?, at t: Int64) -> Int64? {
        guard let rescinded = rescission(of: original, start: start)?.signedDate.millisecondsSince1970, rescinded <= t else { return nil }
        guard let chain else { return rescinded }
        for index in facts.chains[chain].members {
            let purchase = facts.purchases[index]
            if purchase.start > rescinded, purchase.start <= t, purchase.reason == .purchase { return nil }
        }
        return rescinded
    }

    /// One `consent_rescinded` event per subscription or one-time purchase begun before the rescission of its app
    /// transaction, at the rescission, anchored on its notification.
    func rescissionEvents(into log: inout EventLog) {
        guard !facts.rescissions.isEmpty else { return }
        var seen: Set<String> = []
        // Purchases are in order of start: the first of each original transaction is when it began.
        for purchase in facts.purchases where seen.insert(purchase.originalTransactionId).inserted {
            guard let rescission = rescission(of: purchase.originalTransactionId, start: purchase.start) else { continue }
            log.add(
                EventDraft(
                    type: .consentRescinded, at: rescission.signedDate.millisecondsSince1970, chain: purchase.originalTransactionId,
                    anchor: rescission.notificationUUID, source: .notification, purchase: nil,
                    notificationUUID: rescission.notificationUUID, environment: purchase.environment ?? rescission.environment,
                    productId: purchase.productId, transactionId: purchase.transactionId))
        }
    }
}
