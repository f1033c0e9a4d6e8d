import AppStoreModels

/// One purchase (one transaction id) after its versions were merged, with everything the engine reads resolved once.
///
/// A class, so that the many reads of the engine share one copy; every property is a constant.
final class Purchase: Sendable {
    let transactionId: String
    let originalTransactionId: String
    let productId: String
    /// The position of `productId` in ``FactSet/productIds``.
    let productIndex: Int
    let kind: ProductKind
    /// The subscription group (subscriptions), else the product id.
    let group: String
    let start: Int64
    /// The end the App Store gave it (`expiresDate`, or the catalog's period) or the end of a non-renewing subscription;
    /// `nil` for what does not end (non-consumables, consumables).
    let naturalEnd: Int64?
    /// The end of the access it gives, after a revocation or an upgrade; `Int64.max` for what does not end.
    let end: Int64
    let revocation: Revocation?
    /// A revocation that a later version of the transaction no longer carries (a reversed refund), and when.
    let reversedRevocation: Revocation?
    let reversedAt: Int64?
    let isUpgraded: Bool
    let periodType: PeriodType
    let reason: TransactionReason?
    let price: Int64?
    let currency: String?
    let storefront: String?
    let environment: Environment?
    let ownership: Ownership
    let originalPurchaseDate: Int64?
    let signedDate: Int64?
    let quantity: Int32?
    /// The commitment a monthly payment belongs to.
    let commitment: BillingCommitment?

    /// What the customer paid for it, as the ledger counts revenue: the price of a period that is not a free trial,
    /// bought by the customer (not shared by family); nil otherwise.
    var paidAmount: Int64? {
        guard ownership != .familyShared, periodType != .trial, let price, price > 0 else { return nil }
        return price
    }

    init(_ draft: PurchaseDraft, productIndex: Int) {
        transactionId = draft.transactionId
        originalTransactionId = draft.originalTransactionId
        productId = draft.productId
        self.productIndex = productIndex
        kind = draft.kind
        group = draft.group
        start = draft.start
        naturalEnd = draft.naturalEnd
        end = draft.end
        revocation = draft.revocation
        reversedRevocation = draft.reversedRevocation
        reversedAt = draft.reversedAt
        isUpgraded = draft.isUpgraded
        periodType = draft.periodType
        reason = draft.reason
        price = draft.price
        currency = draft.currency
        storefront = draft.storefront
        environment = draft.environment
        ownership = draft.ownership
        originalPurchaseDate = draft.originalPurchaseDate
        signedDate = draft.signedDate
        quantity = draft.quantity
        commitment = draft.commitment
    }
}

/// A purchase while the fact set is built.
struct PurchaseDraft {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var kind: ProductKind
    var group: String
    var start: Int64
    var naturalEnd: Int64?
    var end: Int64 = .max
    var revocation: Revocation?
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
    var commitment: BillingCommitment?
}

/// What the engine reads of a renewal info.
struct RenewalRecord: Hashable, Sendable {
    var signedDate: Timestamp?
    var autoRenewStatus: AutoRenewStatus?
    var isInBillingRetryPeriod: Bool?
    var gracePeriodExpiresDate: Timestamp?
    var expirationIntent: ExpirationIntent?
    var autoRenewProductId: String?
    var eligibleWinBackOfferIds: [String]?
    /// Whether a new commitment follows the current one (`commitmentInfo.commitmentAutoRenewStatus`).
    var commitmentAutoRenewStatus: AutoRenewStatus?
    /// What the next renewal charges, in milliunits of `currency` (Apple's `renewalPrice`).
    var renewalPrice: Int64?
    var currency: String?

    init(_ renewal: borrowing JWSRenewalInfoDecodedPayload) {
        signedDate = renewal.signedDate
        autoRenewStatus = renewal.autoRenewStatus
        isInBillingRetryPeriod = renewal.isInBillingRetryPeriod
        gracePeriodExpiresDate = renewal.gracePeriodExpiresDate
        expirationIntent = renewal.expirationIntent
        autoRenewProductId = renewal.autoRenewProductId
        eligibleWinBackOfferIds = renewal.eligibleWinBackOfferIds
        commitmentAutoRenewStatus = renewal.commitmentInfo?.commitmentAutoRenewStatus
        renewalPrice = renewal.renewalPrice
        currency = renewal.currency
    }
}

/// One auto-renewable subscription: the purchases that share an original transaction id, with what was said about it.
struct Chain: Sendable {
    let id: String
    /// Positions in ``FactSet/purchases``, in order.
    var members: [Int]
    /// Its renewal infos, oldest first.
    var renewals: [RenewalRecord] = []
    /// Its notifications, by signing date.
    var notifications: [NotificationFact] = []
    /// The latest word on auto-renew (a renewal info's status or a renewal-status notification) and when it was signed.
    var autoRenew: (at: Int64, on: Bool)?
}

/// The facts of one customer, de-duplicated and merged, in a canonical order that does not depend on how they came.
struct FactSet: Sendable {
    /// All purchases, ordered by start, then transaction id.
    var purchases: [Purchase] = []
    /// Auto-renewable subscriptions, sorted by original transaction id.
    var chains: [Chain] = []
    /// The products bought, each once; purchases point into it.
    var productIds: [String] = []
    /// The catalog's entitlements, sorted, with the indices (into `productIds`) of the bought products that grant each.
    var entitlementSources: [(id: String, products: [Int])] = []
    /// Every subscription group: the catalog's, then those only purchases name. Each with when it was first bought and
    /// its first introductory period (a free trial or an introductory price), if any.
    var groups: [(id: String, firstStart: Int64?, firstIntro: Purchase?)] = []
    /// Notifications, by signing date then UUID.
    var notifications: [NotificationFact] = []
    /// The earliest rescission of consent (``ConsentRescission``) of each app transaction.
    var rescissions: [String: NotificationFact] = [:]
    /// The app transaction (`appTransactionId`) each original transaction's transactions carry.
    var appTransactions: [String: String] = [:]

    init(facts: [Fact], catalog: Catalog, environment: Environment?) {
        var gathered = Gathered(facts, catalog: catalog, environment: environment)
        // Moved out, not copied: the drafts are large and are changed in place below.
        var drafts = gathered.drafts
        gathered.drafts = []
        let kept = Self.mergeVersions(&drafts, draftFacts: gathered.draftFacts, facts: facts, catalog: catalog)
        // The final order of purchases: by start, then transaction id. `order[i]` is the draft of purchase `i`.
        let order = kept.sorted {
            drafts[$0].start != drafts[$1].start
                ? drafts[$0].start < drafts[$1].start : drafts[$0].transactionId < drafts[$1].transactionId
        }
        var chains = Self.chains(order: order, drafts: drafts)
        Self.cutUpgrades(&drafts, order: order, chains: chains)
        (purchases, productIds) = Self.purchases(order: order, drafts: drafts)
        entitlementSources = Self.entitlementSources(productIds: productIds, catalog: catalog)
        groups = Self.groups(purchases: purchases, catalog: catalog)
        Self.attachRenewals(gathered.renewals, facts: facts, to: &chains)
        rescissions = Self.rescissions(gathered.notifications)
        appTransactions = gathered.appTransactions
        notifications = Self.attachNotifications(gathered.notifications, to: &chains)
        for index in chains.indices {
            chains[index].autoRenew = Self.autoRenew(renewals: chains[index].renewals, notifications: chains[index].notifications)
        }
        self.chains = chains
    }

    /// The facts of one environment in one pass, one copy of each payload: transactions become drafts at once
    /// (repeated ones are merged later), renewal infos become the few fields the engine reads.
    struct Gathered {
        var drafts: [PurchaseDraft] = []
        /// For each draft, the index of its fact.
        var draftFacts: [Int] = []
        var renewals: [(chain: String, record: RenewalRecord, fact: Int)] = []
        var notifications: [NotificationFact] = []
        var appTransactions: [String: String] = [:]

        init(_ facts: [Fact], catalog: Catalog, environment: Environment?) {
            for index in facts.indices {
                switch facts[index] {
                case .transaction(let transaction):
                    guard transaction.transactionId != nil, transaction.productId != nil, transaction.purchaseDate != nil
                    else { continue }
                    if let environment, let own = transaction.environment, own != environment { continue }
                    drafts.append(FactSet.draft(transaction, catalog: catalog))
                    draftFacts.append(index)
                    if let appTransaction = transaction.appTransactionId {
                        appTransactions[transaction.originalTransactionId ?? transaction.transactionId ?? ""] = appTransaction
                    }
                case .renewalInfo(let renewal):
                    guard let id = renewal.originalTransactionId else { continue }
                    if let environment, let own = renewal.environment, own != environment { continue }
                    renewals.append((id, RenewalRecord(renewal), index))
                case .notification(let notification):
                    if let environment, let own = notification.environment, own != environment { continue }
                    notifications.append(notification)
                }
            }
        }
    }

    /// Versions of one transaction, merged into one draft (in place of the first); returns the drafts kept. Drafts are
    /// large: this and everything after it moves indices, not drafts.
    static func mergeVersions(_ drafts: inout [PurchaseDraft], draftFacts: [Int], facts: [Fact], catalog: Catalog) -> [Int] {
        var byId = Array(drafts.indices)
        byId.sort { drafts[$0].transactionId < drafts[$1].transactionId }
        var kept: [Int] = []
        kept.reserveCapacity(drafts.count)
        var position = 0
        while position < byId.count {
            var next = position + 1
            while next < byId.count, drafts[byId[next]].transactionId == drafts[byId[position]].transactionId { next += 1 }
            if next - position > 1 {
                let payloads = byId[position..<next].compactMap { draft -> JWSTransactionDecodedPayload? in
                    if case .transaction(let transaction) = facts[draftFacts[draft]] { return transaction }
                    return nil
                }
                if let merged = purchase(merging: payloads, catalog: catalog) { drafts[byId[position]] = merged }
            }
            kept.append(byId[position])
            position = next
        }
        return kept
    }

    /// Subscriptions, by original transaction id; members are purchase positions.
    static func chains(order: [Int], drafts: [PurchaseDraft]) -> [Chain] {
        var members = order.indices.filter { drafts[order[$0]].kind == .autoRenewable }
        members.sort {
            let left = drafts[order[$0]].originalTransactionId
            let right = drafts[order[$1]].originalTransactionId
            return left != right ? left < right : $0 < $1
        }
        var chains: [Chain] = []
        for member in members {
            let original = drafts[order[member]].originalTransactionId
            if chains.last?.id == original {
                chains[chains.count - 1].members.append(member)
            } else {
                chains.append(Chain(id: original, members: [member]))
            }
        }
        return chains
    }

    /// The purchases in their final order, and the products bought, each once (purchases point into it).
    static func purchases(order: [Int], drafts: [PurchaseDraft]) -> ([Purchase], [String]) {
        var productIds: [String] = []
        var purchases: [Purchase] = []
        purchases.reserveCapacity(order.count)
        for draftIndex in order {
            let productId = drafts[draftIndex].productId
            let index: Int
            if let known = productIds.firstIndex(of: productId) {
                index = known
            } else {
                index = productIds.count
                productIds.append(productId)
            }
            purchases.append(Purchase(drafts[draftIndex], productIndex: index))
        }
        return (purchases, productIds)
    }

    /// The catalog's entitlements, sorted, with the bought products that grant each.
    static func entitlementSources(productIds: [String], catalog: Catalog) -> [(id: String, products: [Int])] {
        var sources = catalog.entitlementIds.map { (id: $0, products: [Int]()) }
        guard !sources.isEmpty else { return sources }
        for (index, productId) in productIds.enumerated() {
            for entitlement in catalog[productId]?.entitlements ?? [] {
                if let position = catalog.entitlementIds.firstIndex(of: entitlement) { sources[position].products.append(index) }
            }
        }
        return sources
    }

    /// Every subscription group (the catalog's, then those only purchases name) with its first purchase and first
    /// introductory period.
    static func groups(purchases: [Purchase], catalog: Catalog) -> [(id: String, firstStart: Int64?, firstIntro: Purchase?)] {
        var groups = catalog.groups.map { (id: $0, firstStart: Int64?.none, firstIntro: Purchase?.none) }
        for purchase in purchases where purchase.kind == .autoRenewable {
            var position = groups.firstIndex { $0.id == purchase.group }
            if position == nil {
                groups.append((id: purchase.group, firstStart: nil, firstIntro: nil))
                position = groups.count - 1
            }
            guard let position else { continue }
            if groups[position].firstStart == nil { groups[position].firstStart = purchase.start }
            if groups[position].firstIntro == nil, purchase.periodType == .trial || purchase.periodType == .intro {
                groups[position].firstIntro = purchase
            }
        }
        return groups
    }

    /// Renewal infos per subscription, oldest first; the same one twice counts once.
    static func attachRenewals(_ renewals: [(chain: String, record: RenewalRecord, fact: Int)], facts: [Fact], to chains: inout [Chain]) {
        let renewalOrder = renewals.indices.sorted { i, j in
            if renewals[i].chain != renewals[j].chain { return renewals[i].chain < renewals[j].chain }
            let left = renewals[i].record.signedDate?.millisecondsSince1970 ?? .min
            let right = renewals[j].record.signedDate?.millisecondsSince1970 ?? .min
            if left != right { return left < right }
            guard case .renewalInfo(let x) = facts[renewals[i].fact], case .renewalInfo(let y) = facts[renewals[j].fact]
            else { return false }
            return Canonical.precedes(x, y)
        }
        var previous: Int?
        for index in renewalOrder {
            defer { previous = index }
            if let previous, renewals[previous].chain == renewals[index].chain, renewals[previous].record == renewals[index].record {
                continue
            }
            if let chain = position(of: renewals[index].chain, in: chains) {
                chains[chain].renewals.append(renewals[index].record)
            }
        }
    }

    /// Notifications: one per UUID (the canonical greatest, if two differ), by signing date; each subscription's
    /// attached to it. Returns them all in that order.
    static func attachNotifications(_ notifications: [NotificationFact], to chains: inout [Chain]) -> [NotificationFact] {
        let byUUID = notifications.indices.sorted { i, j in
            notifications[i].notificationUUID != notifications[j].notificationUUID
                ? notifications[i].notificationUUID < notifications[j].notificationUUID
                : Canonical.precedes(notifications[i], notifications[j])
        }
        var kept: [Int] = []
        kept.reserveCapacity(byUUID.count)
        for (offset, index) in byUUID.enumerated()
        where offset + 1 == byUUID.count || notifications[byUUID[offset + 1]].notificationUUID != notifications[index].notificationUUID {
            kept.append(index)
        }
        kept.sort { Canonical.precedes(notifications[$0], notifications[$1]) }
        var ordered: [NotificationFact] = []
        ordered.reserveCapacity(kept.count)
        for index in kept {
            ordered.append(notifications[index])
            guard let chain = notifications[index].originalTransactionId else { continue }
            if let position = position(of: chain, in: chains) { chains[position].notifications.append(notifications[index]) }
        }
        return ordered
    }

    /// The index of a subscription in `chains`, which is sorted by id.
    static func position(of id: String, in chains: [Chain]) -> Int? {
        var low = 0
        var high = chains.count
        while low < high {
            let middle = (low + high) / 2
            if chains[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < chains.count && chains[low].id == id ? low : nil
    }

    /// The latest word on auto-renew: the latest renewal info's status or renewal-status notification.
    static func autoRenew(renewals: [RenewalRecord], notifications: [NotificationFact]) -> (at: Int64, on: Bool)? {
        var latest: (at: Int64, on: Bool)?
        if let renewal = renewals.last, let status = renewal.autoRenewStatus, status.isKnown {
            latest = (renewal.signedDate?.millisecondsSince1970 ?? .min, status == .on)
        }
        for notification in notifications where notification.notificationType == .didChangeRenewalStatus {
            let on: Bool
            switch notification.subtype {
            case .some(.autoRenewEnabled): on = true
            case .some(.autoRenewDisabled): on = false
            default: continue
            }
            let at = notification.signedDate.millisecondsSince1970
            if latest.map({ at > $0.at }) ?? true { latest = (at, on) }
        }
        return latest
    }

    /// One purchase from every version of a transaction: the latest signed version decides (a refund, or a refund
    /// reversed later), and fields it lacks are filled from the others (a legacy receipt carries no price).
    static func purchase(merging versions: [JWSTransactionDecodedPayload], catalog: Catalog) -> PurchaseDraft? {
        let ordered = versions.sorted(by: Canonical.precedes)
        guard var primary = ordered.last else { return nil }
        let others = ordered.dropLast().reversed()
        for other in others where other != primary { primary.fill(from: other) }
        var purchase = draft(primary, catalog: catalog)
        if purchase.revocation == nil,
            let reversed = others.first(where: { $0.revocationDate != nil }).flatMap({ Revocation($0) })
        {
            purchase.reversedRevocation = reversed
            purchase.reversedAt = max(purchase.signedDate ?? reversed.date.millisecondsSince1970, reversed.date.millisecondsSince1970)
        }
        return purchase
    }

    static func draft(_ primary: borrowing JWSTransactionDecodedPayload, catalog: Catalog) -> PurchaseDraft {
        let productId = primary.productId ?? ""
        let product = catalog[productId]
        // The catalog decides, then Apple's `type`. Legacy receipt entries carry no `type`: an entry with an expiry is a
        // subscription; any other of a product the catalog does not list is only listed (as a consumable), because
        // guessing "non-consumable" would grant it for ever.
        let kind =
            product?.type ?? primary.type.flatMap(ProductKind.init)
            ?? (primary.expiresDate != nil ? .autoRenewable : .consumable)
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
        let revocation = Revocation(primary)
        var end = naturalEnd ?? .max
        if let revocation { end = min(end, max(start, revocation.date.millisecondsSince1970)) }
        return PurchaseDraft(
            transactionId: primary.transactionId ?? "",
            originalTransactionId: primary.originalTransactionId ?? primary.transactionId ?? "",
            productId: productId,
            kind: kind,
            group: kind == .autoRenewable ? (product?.group ?? primary.subscriptionGroupIdentifier ?? productId) : productId,
            start: start,
            naturalEnd: naturalEnd,
            end: end,
            revocation: revocation,
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
            quantity: primary.quantity,
            commitment: kind == .autoRenewable ? BillingCommitment(primary) : nil)
    }

    /// An upgraded transaction stops giving access when the upgrade starts: at the next purchase of its subscription,
    /// else of its group, else when Apple signed it as upgraded.
    ///
    /// A period that a purchase of another product of the same subscription interrupts is upgraded even when no
    /// signed version says so: Apple's upgrade notification carries only the new transaction, and the old one's
    /// `isUpgraded` shows only in the transaction history.
    static func cutUpgrades(_ drafts: inout [PurchaseDraft], order: [Int], chains: [Chain]) {
        for chain in chains {
            for (position, member) in chain.members.enumerated() where !drafts[order[member]].isUpgraded {
                let index = order[member]
                guard let next = chain.members[(position + 1)...].first(where: { drafts[order[$0]].start > drafts[index].start }) else {
                    continue
                }
                let later = drafts[order[next]]
                if later.reason == .purchase, later.productId != drafts[index].productId, later.start < drafts[index].end,
                    later.start < (drafts[index].naturalEnd ?? .max), drafts[index].revocation == nil
                {
                    drafts[index].isUpgraded = true
                }
            }
            for (position, member) in chain.members.enumerated() where drafts[order[member]].isUpgraded {
                let index = order[member]
                let start = drafts[index].start
                let group = drafts[index].group
                let transactionId = drafts[index].transactionId
                var cut: Int64?
                for next in chain.members[(position + 1)...] where drafts[order[next]].start >= start {
                    cut = drafts[order[next]].start
                    break
                }
                if cut == nil {
                    cut = order.first(where: {
                        drafts[$0].kind == .autoRenewable && drafts[$0].group == group && drafts[$0].start > start
                            && drafts[$0].transactionId != transactionId
                    }).map { drafts[$0].start }
                }
                let upgradeAt = cut ?? drafts[index].signedDate ?? start
                drafts[index].end = min(drafts[index].end, max(start, upgradeAt))
            }
        }
    }
}

extension Revocation {
    init?(_ transaction: borrowing JWSTransactionDecodedPayload) {
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
        if billingPlanType == nil {
            billingPlanType = other.billingPlanType
            commitmentInfo = other.commitmentInfo
        }
    }
}
