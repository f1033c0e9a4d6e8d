// The split-test pages: the list with a form for a new definition, one experiment's results and controls.
import StorekeeperCore

struct ExperimentsPage {
    struct Row {
        var key: String
        var href: String
        var placement: String
        var status: String
        var phase: Int
        var updated: String
    }
    var title = "Experiments"
    var chrome: DashboardChrome
    var experiments: [Row]
    var createAction: String
    var definition: String
    var error: String?
}

struct ExperimentPage {
    struct Metric {
        var value: String
        var lift: String
        var interval: String
        var pValue: String
        var chance: String
    }
    struct Row {
        var key: String
        var control: Bool
        var controlCheck: Bool
        var exposed: Int
        var trials: Int
        var paid: Int
        var gross: String
        var proceeds: String
        var unconverted: Int
        var paidMetric: Metric
        var revenueMetric: Metric
    }
    struct Action {
        var label: String
        var field: String
        var value: String
    }
    struct Chart {
        var svg: String
    }
    var title: String
    var chrome: DashboardChrome
    var key: String
    var status: String
    var phase: Int
    var placement: String
    var started: String
    var definitionJSON: String
    var editAction: String
    var statusAction: String
    var editor: String
    var actions: [Action]
    var finished: Bool
    var error: String?
    var environment: String
    var window: String
    var windows: [FormOption]
    var rows: [Row]
    var srmAlarm: Bool
    var srm: String
    var recommendation: String
    var recommendationReason: String
    var charts: [Chart]
}

extension DashboardTemplates {
    static let experiments = """
        {{> header}}
        <h1>Experiments</h1>
        <p class="note">Split tests of paywalls served on placements. Paywalls and placements are made with the API (PUT /v1/apps/{appId}/paywalls/{id}, PUT …/placements/{id}).</p>
        <table><thead><tr><th>Key</th><th>Placement</th><th>Status</th><th class="n">Phase</th><th>Changed</th></tr></thead>
        <tbody>{{#experiments}}<tr><td><a href="{{href}}">{{key}}</a></td><td>{{placement}}</td><td data-field="status">{{status}}</td><td class="n">{{phase}}</td><td>{{updated}}</td></tr>{{/experiments}}</tbody></table>
        {{^experiments}}<p>No experiments yet.</p>{{/experiments}}
        <section><h2>New experiment</h2>
        {{#error}}<p class="error" role="alert" id="definition-error">{{error}}</p>{{/error}}
        <form method="post" action="{{createAction}}"><input type="hidden" name="csrf" value="{{chrome.csrf}}">
        <label>Definition (JSON: key, placement, variants; seed, phase, weights, coverage, targeting, namespace optional; a draft until started)
        <textarea name="definition" rows="8" cols="90" spellcheck="false">{{definition}}</textarea></label>
        <p><button type="submit">Create</button></p></form></section>
        {{> footer}}
        """

    static let experiment = """
        {{> header}}
        <h1>{{key}} <span class="note" data-field="status">{{status}}</span></h1>
        <p class="note">Placement {{placement}} · phase {{phase}} · started {{started}}</p>
        {{#error}}<p class="error" role="alert" id="definition-error">{{error}}</p>{{/error}}
        {{#srmAlarm}}<p class="error" role="alert" id="srm">Sample ratio mismatch ({{srm}}): the exposures do not split as the weights say. Something in the delivery is broken; no comparison here can be trusted.</p>{{/srmAlarm}}
        <section><h2>Recommendation: <span data-field="recommendation">{{recommendation}}</span></h2><p>{{recommendationReason}}</p>
        {{^finished}}<form class="controls" method="post" action="{{statusAction}}"><input type="hidden" name="csrf" value="{{chrome.csrf}}">
        {{#actions}}<button type="submit" name="{{field}}" value="{{value}}">{{label}}</button>{{/actions}}</form>{{/finished}}</section>
        <section><h2>Results</h2>
        <form class="controls" method="get"><input type="hidden" name="environment" value="{{environment}}">
        <label>Window (days after the first exposure) <select name="window">{{#windows}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/windows}}</select></label><button type="submit">Show</button></form>
        <table id="results"><thead><tr><th>Variant</th><th class="n">Exposed</th><th class="n">Trials</th><th class="n">Paid</th><th class="n">Paid rate</th><th class="n">Lift</th><th>Always-valid interval</th><th class="n">p (Holm)</th><th class="n">Revenue / exposed</th><th class="n">Lift</th><th>Always-valid interval</th><th class="n">P(beat control)</th><th class="n">Gross USD</th><th class="n">Proceeds USD</th></tr></thead>
        <tbody>{{#rows}}<tr data-variant="{{key}}"><td>{{key}}{{#control}} (control){{/control}}{{#controlCheck}} (A/A){{/controlCheck}}</td><td class="n" data-field="exposed">{{exposed}}</td><td class="n">{{trials}}</td><td class="n" data-field="paid">{{paid}}</td>
        {{#paidMetric}}<td class="n">{{value}}</td><td class="n">{{lift}}</td><td>{{interval}}</td><td class="n">{{pValue}}</td>{{/paidMetric}}
        {{#revenueMetric}}<td class="n">{{value}}</td><td class="n">{{lift}}</td><td>{{interval}}</td><td class="n">{{chance}}</td>{{/revenueMetric}}
        <td class="n">{{gross}}</td><td class="n">{{proceeds}}{{#unconverted}} ({{unconverted}} without a rate){{/unconverted}}</td></tr>{{/rows}}</tbody></table>
        <p class="note">Lifts are relative to the control; the intervals stay valid however often the page is looked at. Revenue is net of refunds, in USD at the loaded rates.</p>
        {{#charts}}{{{svg}}}{{/charts}}</section>
        {{^finished}}<section><h2>Change the definition</h2>
        <p class="note">New variants, weights, targeting, namespace or seed start a new phase (everyone is assigned again); coverage keeps the phase.</p>
        <form method="post" action="{{editAction}}"><input type="hidden" name="csrf" value="{{chrome.csrf}}">
        <textarea name="definition" rows="12" cols="90" spellcheck="false">{{editor}}</textarea>
        <p><button type="submit">Save</button></p></form></section>{{/finished}}
        <section><h2>Definition</h2><pre>{{definitionJSON}}</pre></section>
        {{> footer}}
        """
}
