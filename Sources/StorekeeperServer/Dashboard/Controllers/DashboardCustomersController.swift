import AppStore
import Entitlements
import Hummingbird
import Storage
import StorekeeperCore

/// The pages of an app's customers: the list (newest first, paged, by status) with the search by any name, one
/// customer's state and timeline, a fact's raw signed data, and the app's latest events. Reads go through
/// `CustomerInspection`.
struct DashboardCustomersController {
    let core: StorekeeperCore

    static let customersPerPage = 50
    static let eventsPerPage = 100

    /// Under `apps/:appId`.
    var appRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("customers", use: customers)
        routes.get("customers/:customerId", use: customer)
        routes.get("raw/:factId", use: raw)
        routes.get("events", use: events)
        return routes
    }

    /// The list, and with `q` the customers that name finds (one found: its page at once).
    @Sendable func customers(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let parameters = request.uri.queryParameters
        let query = parameters.get("q") ?? ""
        let environment = scope.environment.rawValue
        let results = try await core.inspection.find(query, app: scope.app).map { match in
            CustomersPage.Result(
                customerId: match.customerId,
                names: match.appUserIds.isEmpty ? match.customerId : match.appUserIds.joined(separator: ", "),
                href: customerHref(match.customerId, scope))
        }
        if results.count == 1, let only = results.first { throw DashboardRedirect(location: only.href) }
        var status: CustomerStatus?
        if let name = parameters.get("status"), !name.isEmpty {
            guard let known = CustomerStatus(rawValue: name) else {
                throw CoreError.invalidInput(field: "status", "no status \(name): new, active or inactive")
            }
            status = known
        }
        let after = try parameters.get("after").map(Self.cursor)
        let listed = try await core.inspection.customers(
            app: scope.app, environment: scope.environment, status: status, after: after, limit: Self.customersPerPage)
        let base = DashboardPaths.app(scope.app.id) + "/customers"
        let rows = listed.map { listing in
            CustomersPage.Row(
                name: listing.appUserId ?? (listing.anonymous ? "anonymous" : listing.customerId), customerId: listing.customerId,
                href: customerHref(listing.customerId, scope), status: listing.status.rawValue, product: listing.productId ?? "–",
                spent: listing.spentUSD.map { DashboardFormat.money($0) } ?? "–", spentRaw: listing.spentUSD.map { String($0) } ?? "",
                lastPurchase: listing.lastPurchaseAt.map(DashboardFormat.instant) ?? "–",
                firstSeen: DashboardFormat.instant(listing.firstSeen))
        }
        let next = listed.count == Self.customersPerPage ? listed.last?.cursor : nil
        let page = CustomersPage(
            chrome: scope.chrome, action: base, query: query, environment: environment, searched: !query.isEmpty,
            results: results,
            statuses: [CustomerStatus.active, .inactive, .new].map { FormOption(name: $0.rawValue, selected: $0 == status) },
            rows: rows,
            nextHref: next.map {
                DashboardPaths.link(
                    base, [("environment", environment), ("status", status?.rawValue), ("after", "\($0.createdAt):\($0.customerId)")])
            })
        return DashboardRender.page("customers", page)
    }

    /// `after`: the previous page's last customer, `<first seen, ms>:<customer id>`.
    static func cursor(_ text: String) throws -> CustomerListCursor {
        guard let colon = text.firstIndex(of: ":"), let createdAt = Int64(text[..<colon]), colon < text.index(before: text.endIndex)
        else { throw CoreError.invalidInput(field: "after", "after is the previous page's last customer, as its link gives it") }
        return CustomerListCursor(createdAt: createdAt, customerId: String(text[text.index(after: colon)...]))
    }

    @Sendable func customer(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let customerId = context.parameters.get("customerId") ?? ""
        guard
            let dossier = try await core.inspection.dossier(customerId: customerId, app: scope.app, environment: scope.environment)
        else {
            throw CoreError.notFound("no customer \(customerId) in this app")
        }
        func when(_ timestamp: Timestamp?) -> String { timestamp.map { DashboardFormat.instant($0.millisecondsSince1970) } ?? "–" }
        func rawHref(_ id: String) -> String { self.rawHref(id, scope) }
        let state = dossier.state
        let page = CustomerPage(
            title: dossier.appUserIds.first ?? dossier.customerId, chrome: scope.chrome, customerId: dossier.customerId,
            firstSeen: dossier.firstSeen.map(DashboardFormat.instant) ?? "–", anonymous: dossier.anonymous, status: state.state.rawValue,
            billingIssue: state.billingIssue,
            entitlements: state.entitlements.sorted { $0.key < $1.key }.map {
                .init(
                    name: $0.key, active: $0.value.active ? "yes" : "no", expires: when($0.value.expiresDate),
                    product: $0.value.productId ?? "–")
            },
            subscriptions: state.subscriptions.map {
                .init(
                    product: $0.productId, group: $0.group, status: $0.status.rawValue, period: $0.periodType.rawValue,
                    purchased: when($0.purchaseDate), expires: when($0.expiresDate),
                    willRenew: $0.willRenew.map { $0 ? "on" : "off" } ?? "–",
                    transaction: $0.transactionId, rawHref: rawHref($0.transactionId))
            },
            hasOthers: !state.nonSubscriptions.isEmpty,
            others: state.nonSubscriptions.map {
                .init(
                    product: $0.productId, type: $0.type.rawValue, purchased: when($0.purchaseDate),
                    active: ($0.active ?? true) ? "yes" : "no")
            },
            timeline: dossier.timeline.map {
                .init(
                    at: DashboardFormat.instant($0.at), kind: $0.kind.rawValue, title: $0.title, detail: $0.detail,
                    price: $0.price == nil ? "" : DashboardFormat.money(milliunits: $0.price, currency: $0.currency),
                    environment: $0.environment, rawHref: $0.rawId.map(rawHref), retracted: $0.retracted)
            })
        return DashboardRender.page("customer", page)
    }

    /// A transaction's stored versions or a notification, decoded and as Apple signed it.
    @Sendable func raw(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let id = context.parameters.get("factId") ?? ""
        let facts = try await core.inspection.rawFacts(id: id, app: scope.app)
        guard !facts.isEmpty else {
            throw CoreError.notFound("no transaction or notification \(id) in this app")
        }
        let page = RawPage(
            title: id, heading: "Signed data: \(id)", chrome: scope.chrome,
            facts: facts.map {
                .init(
                    title: $0.title, environment: $0.environment, receivedAt: DashboardFormat.instant($0.receivedAt), json: $0.json,
                    signed: $0.signed)
            })
        return DashboardRender.page("raw", page)
    }

    /// The app's events, latest first, filtered by type; pages back with `before`.
    @Sendable func events(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let parameters = request.uri.queryParameters
        var type: SubscriptionEventType?
        if let name = parameters.get("type"), !name.isEmpty {
            guard let known = SubscriptionEventType(rawValue: name) else {
                throw CoreError.invalidInput(field: "type", "no event type \(name)")
            }
            type = known
        }
        var before: Int64?
        if let text = parameters.get("before") {
            guard let value = Int64(text), value > 0 else {
                throw CoreError.invalidInput(field: "before", "before is a positive event number")
            }
            before = value
        }
        let found = try await core.inspection.latestEvents(
            app: scope.app, environment: scope.environment, type: type, before: before, limit: Self.eventsPerPage)
        let base = DashboardPaths.app(scope.app.id)
        let environment = scope.environment.rawValue
        let rows = found.map { item in
            EventsPage.Row(
                effective: DashboardFormat.instant(item.event.effectiveAt.millisecondsSince1970), type: item.event.type.rawValue,
                product: item.event.productId ?? "–",
                price: DashboardFormat.money(milliunits: item.event.price, currency: item.event.currency),
                customerId: item.customerId, customerHref: customerHref(item.customerId, scope),
                recorded: DashboardFormat.instant(item.recordedAt), retracted: item.retracted)
        }
        let older = found.count == Self.eventsPerPage ? found.last.map { String($0.seq) } : nil
        let page = EventsPage(
            chrome: scope.chrome, action: base + "/events", environment: environment,
            types: SubscriptionEventType.allCases.map { FormOption(name: $0.rawValue, selected: $0 == type) }, events: rows,
            olderHref: older.map {
                DashboardPaths.link(base + "/events", [("environment", environment), ("type", type?.rawValue), ("before", $0)])
            })
        return DashboardRender.page("events", page)
    }

    private func customerHref(_ customerId: String, _ scope: DashboardScope) -> String {
        DashboardPaths.link(
            DashboardPaths.app(scope.app.id) + "/customers/" + DashboardPaths.pathEscaped(customerId),
            [("environment", scope.environment.rawValue)])
    }

    private func rawHref(_ id: String, _ scope: DashboardScope) -> String {
        DashboardPaths.link(
            DashboardPaths.app(scope.app.id) + "/raw/" + DashboardPaths.pathEscaped(id), [("environment", scope.environment.rawValue)])
    }
}
