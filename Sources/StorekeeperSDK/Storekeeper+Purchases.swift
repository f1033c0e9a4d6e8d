import Foundation

extension Storekeeper {
    /// What a restore found.
    public struct RestoreResult: Sendable {
        /// The customer info after the restore.
        public var customerInfo: CustomerInfo
        /// Purchases moved to this customer from another one (the app's `transfer` policy).
        public var transferredFromAnotherCustomer: Bool
        /// Original transaction ids that belong to another customer and stayed there (the app's `keep` policy).
        public var conflicts: [String]
    }

    /// Buys a product, with the customer's appAccountToken, and returns the customer info that includes it. The signed
    /// transaction is on disk before anything else; if the server cannot take it now it is retried (and posted at the
    /// next launch), the transaction stays unfinished, and the answer is the device's own computation.
    public func purchase(
        _ productId: String, promotionalOffer: PromotionalOfferSignature? = nil
    ) async throws(StorekeeperError) -> CustomerInfo {
        var token = cachedCustomerInfo?.appAccountToken
        if token == nil { token = try? await customerInfo().appAccountToken }
        let appUserId = self.appUserId
        switch try await store.purchase(productId: productId, appAccountToken: token, promotionalOffer: promotionalOffer) {
        case .userCancelled: throw .purchaseCancelled
        case .pending: throw .purchasePending
        case .purchased(let transaction):
            let item: QueuedPurchase
            do {
                item = try await queue.add(transaction, appUserId: appUserId, finishes: true)
            } catch {
                // Not on disk: the transaction stays unfinished in the store, which hands it over again at launch.
                log("could not queue transaction \(transaction.id): \(error)")
                throw .store("the purchase could not be saved before posting: \(error)")
            }
            switch await post(item.transaction.id) {
            case .accepted(let info): return info
            case .refused(let error): throw error
            case .failed(let error):
                scheduleRetry(after: error.retryAfter)
                if let info = await deviceInfo() { return info }
                throw .unavailable("the purchase is saved and will be posted when the server can be reached")
            case .busy:
                if let info = await deviceInfo() { return info }
                throw .unavailable("the purchase is saved and will be posted when the server can be reached")
            }
        }
    }

    /// A promotional offer signed by the server for the current customer (an existing or lapsed subscriber of the
    /// product's group), to pass to `purchase(_:promotionalOffer:)`.
    public func promotionalOffer(productId: String, offerId: String) async throws(StorekeeperError) -> PromotionalOfferSignature {
        try await api.promotionalOffer(.init(productId: productId, offerId: offerId), for: appUserId, environment: await storeEnvironment())
    }

    /// For a user's "Restore Purchases" button: syncs with the App Store (which may ask for the Apple ID password),
    /// then posts every current transaction. Purchases that belong to another customer move here or, under the `keep`
    /// policy, are listed as conflicts.
    public func restorePurchases() async throws(StorekeeperError) -> RestoreResult {
        try await store.sync()
        let appUserId = self.appUserId
        var transferred = false
        var conflicts: [String] = []
        var latest: CustomerInfo?
        for transaction in await store.currentEntitlements() {
            do {
                try await queue.add(transaction, appUserId: appUserId, finishes: false)
            } catch {
                throw .store("the restored purchase could not be saved before posting: \(error)")
            }
            switch await post(transaction.id) {
            case .accepted(let info):
                transferred = transferred || info.transferred
                latest = info
            case .refused(.conflict):
                conflicts.append(transaction.originalId)
            case .refused(let error):
                log("the server refused restored transaction \(transaction.id): \(error)")
            case .failed(let error):
                scheduleRetry(after: error.retryAfter)
                throw error
            case .busy:
                continue
            }
        }
        let info = try await fetchedOrLatest(latest)
        return RestoreResult(customerInfo: info, transferredFromAnotherCustomer: transferred, conflicts: conflicts)
    }

    private func fetchedOrLatest(_ latest: CustomerInfo?) async throws(StorekeeperError) -> CustomerInfo {
        do {
            return try await customerInfo(policy: .fetchCurrent)
        } catch {
            if let latest { return latest }
            throw error
        }
    }

    /// A transaction from the store's updates: a renewal, an approval, a purchase on another device.
    func received(_ transaction: StoreTransaction) async {
        do {
            try await queue.add(transaction, appUserId: appUserId, finishes: true)
        } catch {
            log("could not queue transaction \(transaction.id): \(error)")
            return
        }
        if case .failed(let error) = await post(transaction.id) { scheduleRetry(after: error.retryAfter) }
    }

    enum PostOutcome: Sendable {
        case accepted(CustomerInfo)
        /// The server refused it for good: off the queue, finished.
        case refused(StorekeeperError)
        /// It may pass later: still queued.
        case failed(StorekeeperError)
        /// Another post of it is under way.
        case busy
    }

    /// Posts one queued transaction; finishes it in the store once the server accepted it or refused it for good.
    func post(_ id: String) async -> PostOutcome {
        guard let item = await queue.begin(id) else { return .busy }
        let outcome: PostOutcome
        do {
            outcome = .accepted(
                try await api.post(
                    transaction: item.transaction.jwsRepresentation, for: item.appUserId, idempotencyKey: item.idempotencyKey,
                    environment: await storeEnvironment()))
        } catch  where error.isPermanent {
            log("the server refused transaction \(id) for good: \(error)")
            // The device's own count took the transaction in; the server's word stands now.
            computed.withLock { $0 = nil }
            outcome = .refused(error)
        } catch {
            await queue.release(id)
            log("transaction \(id) stays queued: \(error)")
            return .failed(error)
        }
        let removed: Bool
        do {
            removed = try await queue.complete(id)
        } catch {
            // Still on disk: posted again at the next launch, which the server answers the same way.
            log("could not remove transaction \(id) from the queue: \(error)")
            removed = true
        }
        if removed, item.finishes { await store.finish(item.transaction) }
        if case .accepted(let info) = outcome { accept(info, etag: nil) }
        return outcome
    }

    /// Posts everything queued, oldest first; stops at the first failure that may pass and schedules a retry.
    func drain() async {
        guard await queue.startDraining() else { return }
        repeat {
            for item in await queue.pending {
                if case .failed(let error) = await post(item.transaction.id) {
                    scheduleRetry(after: error.retryAfter)
                    break
                }
            }
        } while await queue.finishDraining()
    }

    /// Drains again after a backoff: the configured delay doubled per failure in a row, at most `maxRetryDelay`, and
    /// never sooner than a server's `Retry-After`.
    func scheduleRetry(after hint: Duration? = nil) {
        let task = Task { [weak self] in
            guard let self, await self.queue.scheduleRetry() else { return }
            let failures = await self.queue.failuresInARow
            var delay = self.configuration.retryDelay * Int(1 << min(max(0, failures - 1), 16))
            if delay > self.configuration.maxRetryDelay { delay = self.configuration.maxRetryDelay }
            if let hint, hint > delay { delay = hint }
            try? await Task.sleep(for: delay)
            await self.queue.retryStarted()
            guard !Task.isCancelled else { return }
            await self.drain()
        }
        trackTask(task)
    }
}
