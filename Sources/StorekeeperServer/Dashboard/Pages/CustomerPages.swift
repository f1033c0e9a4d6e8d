// The pages of an app's customers: the list and search, one customer, a fact's raw signed data, the events.
import StorekeeperCore

/// The customer list (newest first, paged, filtered by status) and the search by any name.
struct CustomersPage {
    struct Result {
        var customerId: String
        var names: String
        var href: String
    }
    /// A line of the list.
    struct Row {
        var name: String
        var customerId: String
        var href: String
        var status: String
        var product: String
        var spent: String
        var spentRaw: String
        var lastPurchase: String
        var firstSeen: String
    }
    var title = "Customers"
    var chrome: DashboardChrome
    var action: String
    var query: String
    var environment: String
    var searched: Bool
    var results: [Result]
    var statuses: [FormOption]
    var rows: [Row]
    var nextHref: String?
}

struct CustomerPage {
    struct Entitlement {
        var name: String
        var active: String
        var expires: String
        var product: String
    }
    struct Subscription {
        var product: String
        var group: String
        var status: String
        var period: String
        var purchased: String
        var expires: String
        var willRenew: String
        var transaction: String
        var rawHref: String
    }
    struct Other {
        var product: String
        var type: String
        var purchased: String
        var active: String
    }
    struct Entry {
        var at: String
        var kind: String
        var title: String
        var detail: String
        var price: String
        var environment: String
        var rawHref: String?
        var retracted: Bool
    }
    var title: String
    var chrome: DashboardChrome
    var customerId: String
    var firstSeen: String
    var anonymous: Bool
    var status: String
    var billingIssue: Bool
    var entitlements: [Entitlement]
    var subscriptions: [Subscription]
    var hasOthers: Bool
    var others: [Other]
    var timeline: [Entry]
}

struct RawPage {
    struct Fact {
        var title: String
        var environment: String
        var receivedAt: String
        var json: String
        var signed: String?
    }
    var title: String
    var heading: String
    var chrome: DashboardChrome
    var facts: [Fact]
}

struct EventsPage {
    struct Row {
        var effective: String
        var type: String
        var product: String
        var price: String
        var customerId: String
        var customerHref: String
        var recorded: String
        var retracted: Bool
    }
    var title = "Events"
    var chrome: DashboardChrome
    var action: String
    var environment: String
    var types: [FormOption]
    var events: [Row]
    var olderHref: String?
}

extension DashboardTemplates {
    static let customers = """
        {{> header}}
        <h1>Customers</h1>
        <form class="controls" method="get" action="{{action}}">
        <label>Find by app user id, alias, original transaction id or transaction id <input name="q" value="{{query}}" size="40" required></label>
        <input type="hidden" name="environment" value="{{environment}}"><button type="submit">Find</button>
        </form>
        {{#searched}}{{^results}}<p>No customer goes by “{{query}}”.</p>{{/results}}{{/searched}}
        <ul class="results">{{#results}}<li><a href="{{href}}">{{names}}</a> <span class="note">{{customerId}}</span></li>{{/results}}</ul>
        <section><h2>Newest customers</h2>
        <form class="controls" method="get" action="{{action}}">
        <label>Status <select name="status"><option value="">every status</option>{{#statuses}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/statuses}}</select></label>
        <input type="hidden" name="environment" value="{{environment}}"><button type="submit">Filter</button>
        </form>
        <table id="customer-list"><thead><tr><th>Customer</th><th>Status</th><th>Product</th><th class="n">Spent (USD, net of refunds)</th><th>Last purchase</th><th>First seen</th></tr></thead>
        <tbody>{{#rows}}<tr data-customer="{{customerId}}"><td><a href="{{href}}">{{name}}</a></td><td data-field="status">{{status}}</td><td>{{product}}</td><td class="n" data-field="spent" data-value="{{spentRaw}}">{{spent}}</td><td>{{lastPurchase}}</td><td>{{firstSeen}}</td></tr>{{/rows}}</tbody></table>
        {{^rows}}<p>No customers{{#statuses}}{{#selected}} with this status{{/selected}}{{/statuses}} yet.</p>{{/rows}}
        {{#nextHref}}<p><a href="{{nextHref}}" rel="next">Older customers</a></p>{{/nextHref}}</section>
        {{> footer}}
        """

    static let customer = """
        {{> header}}
        <h1>Customer {{title}}</h1>
        <p class="note">Customer id {{customerId}} · first seen {{firstSeen}}{{#anonymous}} · anonymous (known only from Apple's notifications){{/anonymous}}</p>
        <section><h2>State</h2><p>Status: <strong data-field="status">{{status}}</strong>{{#billingIssue}} · <strong>billing issue</strong>{{/billingIssue}}</p>
        <h3>Entitlements</h3><table><thead><tr><th>Entitlement</th><th>Active</th><th>Expires</th><th>Product</th></tr></thead>
        <tbody>{{#entitlements}}<tr><td>{{name}}</td><td data-field="active">{{active}}</td><td>{{expires}}</td><td>{{product}}</td></tr>{{/entitlements}}</tbody></table>
        <h3>Subscriptions</h3><table><thead><tr><th>Product</th><th>Group</th><th>Status</th><th>Period</th><th>Purchased</th><th>Expires</th><th>Auto-renew</th><th>Latest transaction</th></tr></thead>
        <tbody>{{#subscriptions}}<tr><td>{{product}}</td><td>{{group}}</td><td>{{status}}</td><td>{{period}}</td><td>{{purchased}}</td><td>{{expires}}</td><td>{{willRenew}}</td><td><a href="{{rawHref}}">{{transaction}}</a></td></tr>{{/subscriptions}}</tbody></table>
        {{#hasOthers}}<h3>Other purchases</h3><table><thead><tr><th>Product</th><th>Type</th><th>Purchased</th><th>Active</th></tr></thead>
        <tbody>{{#others}}<tr><td>{{product}}</td><td>{{type}}</td><td>{{purchased}}</td><td>{{active}}</td></tr>{{/others}}</tbody></table>{{/hasOthers}}
        </section>
        <section><h2>Timeline</h2><table><thead><tr><th>When</th><th>What</th><th>Detail</th><th class="n">Price</th><th>Environment</th><th></th></tr></thead>
        <tbody>{{#timeline}}<tr{{#retracted}} class="retracted"{{/retracted}}><td>{{at}}</td><td>{{kind}}: {{title}}</td><td>{{detail}}</td><td class="n">{{price}}</td><td>{{environment}}</td><td>{{#rawHref}}<a href="{{rawHref}}">raw</a>{{/rawHref}}</td></tr>{{/timeline}}</tbody></table></section>
        {{> footer}}
        """

    static let raw = """
        {{> header}}
        <h1>{{heading}}</h1>
        {{#facts}}<section><h2>{{title}}</h2><p class="note">{{environment}} · received {{receivedAt}}</p>
        <h3>Decoded</h3><pre>{{json}}</pre>
        {{#signed}}<h3>Signed by Apple (as received)</h3><pre class="signed">{{signed}}</pre>{{/signed}}
        {{^signed}}<p class="note">This fact came without signed data.</p>{{/signed}}</section>{{/facts}}
        {{> footer}}
        """

    static let events = """
        {{> header}}
        <h1>Events</h1>
        <form class="controls" method="get" action="{{action}}">
        <label>Type <select name="type"><option value="">every type</option>{{#types}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/types}}</select></label>
        <input type="hidden" name="environment" value="{{environment}}"><button type="submit">Filter</button>
        </form>
        <table><thead><tr><th>Effective</th><th>Type</th><th>Product</th><th>Price</th><th>Customer</th><th>Recorded</th></tr></thead>
        <tbody>{{#events}}<tr{{#retracted}} class="retracted"{{/retracted}}><td>{{effective}}</td><td data-field="type">{{type}}</td><td>{{product}}</td><td>{{price}}</td><td><a href="{{customerHref}}">{{customerId}}</a></td><td>{{recorded}}</td></tr>{{/events}}</tbody></table>
        {{^events}}<p>No events.</p>{{/events}}
        {{#olderHref}}<p><a href="{{olderHref}}">Older events</a></p>{{/olderHref}}
        {{> footer}}
        """
}
