// The pages of an app's event destinations.
import StorekeeperCore

struct IntegrationsPage {
    struct Row {
        var name: String
        var kind: String
        var href: String
        var state: String
        var disabledReason: String?
        var waiting: Int
        var dead: Int
    }
    var title = "Integrations"
    var chrome: DashboardChrome
    var integrations: [Row]
}

struct IntegrationPage {
    /// A configuration field and its value.
    struct Field {
        var key: String
        var value: String
    }
    /// How many deliveries have a status.
    struct Count {
        var key: String
        var value: Int
    }
    struct Row {
        var id: String
        var eventId: String
        var status: String
        var attempts: Int
        var updated: String
        var next: String
        var answer: String
        var error: String
        var retraction: Bool
    }
    var title: String
    var chrome: DashboardChrome
    var name: String
    var kind: String
    var config: [Field]
    var secrets: String
    var enabled: Bool
    var disabledReason: String?
    var counts: [Count]
    var recent: [Row]
    var failures: [Row]
    var replayAction: String
    var from: String
    var to: String
    var replayed: String?
}

extension DashboardTemplates {
    static let integrations = """
        {{> header}}
        <h1>Integrations</h1>
        <p class="note">Where this app's events go. Add or change destinations with the API (POST /v1/apps/{appId}/integrations).</p>
        <table><thead><tr><th>Name</th><th>Kind</th><th>State</th><th class="n">Waiting</th><th class="n">Dead</th></tr></thead>
        <tbody>{{#integrations}}<tr><td><a href="{{href}}">{{name}}</a></td><td>{{kind}}</td><td data-field="state">{{state}}{{#disabledReason}}: {{disabledReason}}{{/disabledReason}}</td><td class="n">{{waiting}}</td><td class="n">{{dead}}</td></tr>{{/integrations}}</tbody></table>
        {{^integrations}}<p>No destinations yet.</p>{{/integrations}}
        {{> footer}}
        """

    static let integration = """
        {{> header}}
        <h1>{{name}} <span class="note">{{kind}}</span></h1>
        {{#replayed}}<p class="warning" role="status">{{replayed}}</p>{{/replayed}}
        {{^enabled}}<p class="error" role="alert">Disabled{{#disabledReason}}: {{disabledReason}}{{/disabledReason}}. Its deliveries wait until it is enabled again (PATCH with "enabled": true).</p>{{/enabled}}
        <section><h2>Configuration</h2><table><tbody>{{#config}}<tr><th>{{key}}</th><td>{{value}}</td></tr>{{/config}}<tr><th>Secrets set</th><td>{{secrets}}</td></tr></tbody></table>
        <div class="cards">{{#counts}}<div class="card"><div class="label">{{key}}</div><div class="number" data-status="{{key}}">{{value}}</div></div>{{/counts}}</div></section>
        <section><h2>Replay</h2><form class="controls" method="post" action="{{replayAction}}">
        <input type="hidden" name="csrf" value="{{chrome.csrf}}">
        <label>Created from <input type="date" name="from" value="{{from}}"></label><label>Until (excluded) <input type="date" name="to" value="{{to}}"></label>
        <label>Which <select name="status"><option value="dead">dead ones</option><option value="all">all</option></select></label>
        <button type="submit">Replay</button></form><p class="note">Replayed deliveries keep their ids, so receivers can deduplicate.</p></section>
        <section><h2>Failures</h2><table><thead><tr><th>Delivery</th><th>Event</th><th>Status</th><th class="n">Attempts</th><th>Next attempt</th><th>Last answer</th><th>Error</th></tr></thead>
        <tbody>{{#failures}}<tr><td>{{id}}</td><td>{{eventId}}{{#retraction}} (retraction){{/retraction}}</td><td>{{status}}</td><td class="n">{{attempts}}</td><td>{{next}}</td><td>{{answer}}</td><td>{{error}}</td></tr>{{/failures}}</tbody></table>
        {{^failures}}<p>No failures.</p>{{/failures}}</section>
        <section><h2>Recent deliveries</h2><table><thead><tr><th>Delivery</th><th>Event</th><th>Status</th><th class="n">Attempts</th><th>Updated</th><th>Last answer</th></tr></thead>
        <tbody>{{#recent}}<tr><td>{{id}}</td><td>{{eventId}}{{#retraction}} (retraction){{/retraction}}</td><td data-field="status">{{status}}</td><td class="n">{{attempts}}</td><td>{{updated}}</td><td>{{answer}}</td></tr>{{/recent}}</tbody></table>
        {{^recent}}<p>No deliveries yet.</p>{{/recent}}</section>
        {{> footer}}
        """
}
