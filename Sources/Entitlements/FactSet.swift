import AppStore

/// One purchase (one transaction id) after its versions were merged, with everything the engine reads resolved once.
struct Purchase: Sendable {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var kind: ProductKind
    /// The subscription group (subscriptions), else the product id.
    var group: String
    var start: Int64
    /// The end the App Store gave it (`expiresDate`, or the catalog's period) or the end of a non-renewing subscription;
    /// `nil` for what does not end (non-consumables, consumables).
    var naturalEnd: Int64?
    /// The end of the access it gives, after a revocation or an upgrade; `Int64.max` for what does not end.
    var end: Int64 = .max
    var revocation: Revocation?
    /// A revocation that a later version of the transaction no longer carries (a reversed refund), and when.
    var reversedRevocation: Revocation?
    var reversedAt: Int64?
    var isUpgraded: Bool
    var periodType: PeriodType
    var reason: TransactionReason?
    var price: Int64?
    var currency: String?
    var storefront: String?
    var environment: Environment?
    var ownership: Ownership
    var originalPurchaseDate: Int64?
    var signedDate: Int64?
    var quantity: Int32?
}

/// The facts of one customer, de-duplicated and merged, in a canonical order that does not depend on how they came.
struct FactSet: Sendable {
    /// All purchases, ordered by start, then transaction id.
    var purchases: [Purchase] = []
    /// Auto-renewable subscriptions: original transaction id → indices into `purchases`, in order.
    var chains: [(id: String, members: [Int])] = []
    /// Renewal infos per original transaction id, oldest first.
    var renewals: [String: [JWSRenewalInfoDecodedPayload]] = [:]
    /// Notifications, by signing date then UUID.
    var notifications: [NotificationFact] = []
    /// Notifications per original transaction id.
    var notificationsByChain: [String: [NotificationFact]] = [:]

    init(facts: [Fact], catalog: Catalog, environment: Environment?) {
        var transactions: [String: [JWSTransactionDecodedPayload]] = [:]
        var renewals: [String: [JWSRenewalInfoDecodedPayload]] = [:]
        var notifications: [String: NotificationFact] = [:]
        for fact in facts {
            switch fact {
            case .transaction(let transaction):
                guard let id = transaction.transactionId, transaction.productId != nil, transaction.purchaseDate != nil
                else { continue }
                if let environment, transaction.environment != nil, transaction.environment != environment { continue }
                transactions[id, default: []].append(transaction)
            case .renewalInfo(let renewal):
                guard let id = renewal.originalTransactionId else { continue }
                if let environment, renewal.environment != nil, renewal.environment != environment { continue }
                renewals[id, default: []].append(renewal)
            case .notification(let notification):
                if let environment, notification.environment != nil, notification.environment != environment { continue }
                if let existing = notifications[notification.notificationUUID],
                    !Canonical.precedes(existing, notification)
                {
                    continue
                }
                notifications[notification.notificationUUID] = notification
            }
        }

        var purchases: [Purchase] = []
        purchases.reserveCapacity(transactions.count)
        for (_, versions) in transactions {
            purchases.append(Self.purchase(merging: versions, catalog: catalog))
        }
        purchases.sort { ($0.start, $0.transactionId) < ($1.start, $1.transactionId) }

        var chainIndex: [String: Int] = [:]
        var chains: [(id: String, members: [Int])] = []
        for (index, purchase) in purchases.enumerated() where purchase.kind == .autoRenewable {
            if let existing = chainIndex[purchase.originalTransactionId] {
                chains[existing].members.append(index)
            } else {
                chainIndex[purchase.originalTransactionId] = chains.count
                chains.append((purchase.originalTransactionId, [index]))
            }
        }
        chains.sort { $0.id < $1.id }
        Self.cutUpgrades(&purchases, chains: chains)

        for (id, versions) in renewals {
            var sorted = versions.sorted(by: Canonical.precedes)
            var unique: [JWSRenewalInfoDecodedPayload] = []
            unique.reserveCapacity(sorted.count)
            for renewal in sorted where unique.last != renewal { unique.append(renewal) }
            sorted = unique
            renewals[id] = sorted
        }

        var byChain: [String: [NotificationFact]] = [:]
        let ordered = notifications.values.sorted(by: Canonical.precedes)
        for notification in ordered {
            if let chain = notification.originalTransactionId { byChain[chain, default: []].append(notification) }
        }
        self.purchases = purchases
        self.chains = chains
        self.renewals = renewals
        self.notifications = ordered
        self.notificationsByChain = byChain
    }

    /// One purchase from every version of a transaction: the latest signed version decides (a refund, or a refund
    /// reversed later), and fields it lacks are filled from the others (a legacy receipt carries no price).
    static func purchase(merging versions: [JWSTransactionDecodedPayload], catalog: Catalog) -> Purchase {
        var primary = versions[0]
        var others: [JWSTransactionDecodedPayload] = []
        if versions.count > 1 {
            let ordered = versions.sorted(by: Canonical.precedes)
            primary = ordered[ordered.count - 1]
            others = ordered.dropLast().reversed()
            for other in others where other != primary { primary.fill(from: other) }
        }
        let productId = primary.productId ?? ""
        let product = catalog[productId]
        let kind = product?.type ?? primary.type.flatMap(ProductKind.init)
            ?? (primary.expiresDate != nil ? .autoRenewable : .nonConsumable)
        let start = primary.purchaseDate?.millisecondsSince1970 ?? 0
        var naturalEnd: Int64?
        switch kind {
        case .autoRenewable:
            naturalEnd = primary.expiresDate?.millisecondsSince1970 ?? product?.period?.added(to: start) ?? start
        case .nonRenewing:
            naturalEnd = product?.duration?.added(to: start) ?? primary.expiresDate?.millisecondsSince1970 ?? start
        case .nonConsumable, .consumable:
            naturalEnd = nil
        }
        var purchase = Purchase(
            transactionId: primary.transactionId ?? "",
            originalTransactionId: primary.originalTransactionId ?? primary.transactionId ?? "",
            productId: productId,
            kind: kind,
            group: kind == .autoRenewable ? (product?.group ?? primary.subscriptionGroupIdentifier ?? productId) : productId,
            start: start,
            naturalEnd: naturalEnd,
            revocation: Revocation(primary),
            isUpgraded: primary.isUpgraded == true,
            periodType: PeriodType(primary),
            reason: primary.transactionReason,
            price: primary.price,
            currency: primary.currency,
            storefront: primary.storefront,
            environment: primary.environment,
            ownership: primary.inAppOwnershipType == .familyShared ? .familyShared : .purchased,
            originalPurchaseDate: primary.originalPurchaseDate?.millisecondsSince1970,
            signedDate: primary.signedDate?.millisecondsSince1970,
            quantity: primary.quantity)
        if purchase.revocation == nil,
            let reversed = others.first(where: { $0.revocationDate != nil }).flatMap(Revocation.init)
        {
            purchase.reversedRevocation = reversed
            purchase.reversedAt = max(purchase.signedDate ?? reversed.date.millisecondsSince1970, reversed.date.millisecondsSince1970)
        }
        var end = naturalEnd ?? .max
        if let revocation = purchase.revocation { end = min(end, max(start, revocation.date.millisecondsSince1970)) }
        purchase.end = end
        return purchase
    }

    /// An upgraded transaction stops giving access when the upgrade starts: at the next purchase of its subscription,
    /// else of its group, else when Apple signed it as upgraded.
    static func cutUpgrades(_ purchases: inout [Purchase], chains: [(id: String, members: [Int])]) {
        for chain in chains {
            for (position, index) in chain.members.enumerated() where purchases[index].isUpgraded {
                let purchase = purchases[index]
                var cut: Int64?
                for next in chain.members[(position + 1)...] where purchases[next].start >= purchase.start {
                    cut = purchases[next].start
                    break
                }
                if cut == nil {
                    cut = purchases.first(where: {
                        $0.kind == .autoRenewable && $0.group == purchase.group && $0.start > purchase.start
                            && $0.transactionId != purchase.transactionId
                    })?.start
                }
                let upgradeAt = cut ?? purchase.signedDate ?? purchase.start
                purchases[index].end = min(purchase.end, max(purchase.start, upgradeAt))
            }
        }
    }
}

extension Revocation {
    init?(_ transaction: JWSTransactionDecodedPayload) {
        guard let date = transaction.revocationDate else { return nil }
        let kind: Kind? =
            switch transaction.revocationType {
            case .some(.refundFull): .full
            case .some(.refundProrated): .prorated
            case .some(.familyRevoke): .familyRevoke
            default: nil
            }
        self.init(
            date: date, reason: transaction.revocationReason == .appIssue ? .appIssue : .other, type: kind,
            percentage: transaction.revocationPercentage)
    }
}

extension JWSTransactionDecodedPayload {
    /// Fills the fields this version lacks from an older one; the revocation is never filled: its absence in the
    /// newest version means it was reversed.
    mutating func fill(from other: JWSTransactionDecodedPayload) {
        originalTransactionId = originalTransactionId ?? other.originalTransactionId
        webOrderLineItemId = webOrderLineItemId ?? other.webOrderLineItemId
        bundleId = bundleId ?? other.bundleId
        subscriptionGroupIdentifier = subscriptionGroupIdentifier ?? other.subscriptionGroupIdentifier
        originalPurchaseDate = originalPurchaseDate ?? other.originalPurchaseDate
        expiresDate = expiresDate ?? other.expiresDate
        quantity = quantity ?? other.quantity
        type = type ?? other.type
        appAccountToken = appAccountToken ?? other.appAccountToken
        inAppOwnershipType = inAppOwnershipType ?? other.inAppOwnershipType
        isUpgraded = isUpgraded ?? other.isUpgraded
        if offerType == nil {
            offerType = other.offerType
            offerDiscountType = other.offerDiscountType
            offerIdentifier = offerIdentifier ?? other.offerIdentifier
        }
        offerDiscountType = offerDiscountType ?? other.offerDiscountType
        environment = environment ?? other.environment
        storefront = storefront ?? other.storefront
        storefrontId = storefrontId ?? other.storefrontId
        transactionReason = transactionReason ?? other.transactionReason
        if price == nil {
            price = other.price
            currency = other.currency
        }
        appTransactionId = appTransactionId ?? other.appTransactionId
        offerPeriod = offerPeriod ?? other.offerPeriod
    }
}
