import Mustache

/// The dashboard's page templates (swift-mustache), compiled into the binary so that `storekeeper serve` needs no
/// files beside it. `{{…}}` escapes HTML; only the server-drawn SVG is inserted raw (`{{{svg}}}`).
enum DashboardTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            do { try library.register(text, named: name) } catch {
                // The templates are constants of this file; a test renders every one.
                preconditionFailure("dashboard template \(name) does not parse: \(error)")
            }
        }
        return library
    }()

    static let templates: [(String, String)] = [
        ("header", header), ("footer", footer), ("signIn", signIn), ("apps", apps), ("overview", overview), ("metric", metric),
        ("trials", trials), ("customers", customers), ("customer", customer), ("raw", raw), ("events", events), ("error", error),
        ("integrations", integrations), ("integration", integration), ("experiments", experiments), ("experiment", experiment),
        ("seriesTable", seriesTable), ("refundRequests", refundRequests),
    ]

    static let style = """
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#f5f5f7}
        header{background:#1d1d1f;color:#fff;padding:10px 20px;display:flex;flex-wrap:wrap;gap:16px;align-items:center}
        header a{color:#fff;text-decoration:none}header a.current{text-decoration:underline}
        .brand{font-weight:600;margin-right:12px}nav{display:flex;flex-wrap:wrap;gap:12px}
        .env{margin-left:auto;display:flex;gap:8px}.env a{padding:2px 8px;border-radius:4px;border:1px solid #666}
        .env a.current{background:#fff;color:#1d1d1f}
        header form{margin:0}header button{background:none;border:1px solid #666;color:#fff;border-radius:4px;cursor:pointer}
        main{max-width:1100px;margin:0 auto;padding:20px}
        .sandbox{background:#ffd60a;color:#1d1d1f;padding:6px 20px;font-weight:600}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:12px;margin-bottom:20px}
        .card{background:#fff;border-radius:8px;padding:12px 16px}.card .label{color:#6e6e73;font-size:13px}
        .card .number{font-size:24px;font-weight:600}
        section{background:#fff;border-radius:8px;padding:12px 16px;margin-bottom:16px}
        .chart{width:100%;height:auto}.chart .grid{stroke:#e5e5ea}.chart .line{stroke:#0071e3;stroke-width:2;fill:#0071e3}
        .chart polyline.line{fill:none}.chart .tick{font-size:11px;fill:#6e6e73}
        table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
        th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e5e5ea}td.n,th.n{text-align:right}
        .warning{background:#fff4e5;border-left:4px solid #ff9500;padding:8px 12px;margin-bottom:12px}
        .error{background:#ffe5e5;border-left:4px solid #ff3b30;padding:8px 12px;margin-bottom:12px}
        .note{color:#6e6e73;font-size:13px}form.controls{display:flex;flex-wrap:wrap;gap:10px;align-items:end}
        label{display:flex;flex-direction:column;font-size:13px;color:#6e6e73}
        input,select,button{font:inherit;padding:4px 6px}pre{white-space:pre-wrap;word-break:break-all;font-size:12px}
        .signin{max-width:360px;margin:80px auto;background:#fff;border-radius:8px;padding:24px}
        .signin form{display:flex;flex-direction:column;gap:12px}.retracted{text-decoration:line-through;color:#6e6e73}
        """

    static let header = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Storekeeper</title><link rel="icon" href="data:,"><style>\(style)</style></head>
        <body>
        {{#chrome}}
        <header>
        <a class="brand" href="/dashboard">Storekeeper</a>
        {{#app}}<nav aria-label="app">{{#links}}<a href="{{href}}"{{#current}} class="current" aria-current="page"{{/current}}>{{name}}</a>{{/links}}</nav>
        <div class="env" aria-label="environment">{{#environments}}<a href="{{href}}"{{#current}} class="current" aria-current="true"{{/current}}>{{name}}</a>{{/environments}}</div>{{/app}}
        <form method="post" action="/dashboard/sign-out"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Sign out {{email}}</button></form>
        </header>
        {{#sandbox}}<div class="sandbox" role="status">Sandbox data: test purchases, not revenue.</div>{{/sandbox}}
        {{/chrome}}
        <main>
        """

    static let footer = """
        </main>
        </body></html>
        """

    static let signIn = """
        {{> header}}
        <div class="signin">
        <h1>Sign in</h1>
        {{#message}}<p class="error" role="alert">{{message}}</p>{{/message}}
        <form method="post" action="/dashboard/sign-in">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="next" value="{{next}}">
        <label>Email <input type="email" name="email" value="{{email}}" autocomplete="username" required autofocus></label>
        <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
        <button type="submit">Sign in</button>
        </form>
        </div>
        {{> footer}}
        """

    static let apps = """
        {{> header}}
        <h1>Apps</h1>
        {{^apps}}<p>You may see no app yet: ask an operator to run <code>storekeeper users create</code> with <code>--apps</code>.</p>{{/apps}}
        <ul>{{#apps}}<li><a href="/dashboard/apps/{{id}}">{{bundleId}}</a> <span class="note">{{id}}</span></li>{{/apps}}</ul>
        {{> footer}}
        """

    /// A series' points as a table: the chart's numbers for screen readers and copy-paste.
    static let seriesTable = """
        <details><summary>Table</summary>
        <table data-metric="{{metric}}"><thead><tr><th>Start</th>{{#columns}}<th class="n">{{.}}</th>{{/columns}}</tr></thead>
        <tbody>{{#rows}}<tr><td>{{start}}</td>{{#cells}}<td class="n" data-field="{{field}}" data-value="{{raw}}">{{text}}</td>{{/cells}}</tr>{{/rows}}</tbody>
        </table></details>
        """

    static let overview = """
        {{> header}}
        <h1>{{bundleId}}</h1>
        {{#warnings}}<p class="warning" role="status">{{.}}</p>{{/warnings}}
        <div class="cards">{{#cards}}<div class="card" data-figure="{{key}}" data-value="{{raw}}"><div class="label">{{label}}</div><div class="number">{{text}}</div></div>{{/cards}}</div>
        {{#rates}}<p class="{{#attention}}warning{{/attention}}{{^attention}}note{{/attention}}" data-rates>{{text}}</p>{{/rates}}
        {{#charts}}<section><h2><a href="{{href}}">{{title}}</a></h2>{{{svg}}}{{> seriesTable}}</section>{{/charts}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        {{> footer}}
        """

    static let metric = """
        {{> header}}
        <h1>{{heading}}</h1>
        <p class="note">{{summary}}</p>
        <form class="controls" method="get" action="{{action}}">
        <label>From <input type="date" name="from" value="{{from}}"></label>
        <label>To (not included) <input type="date" name="to" value="{{to}}"></label>
        <label>Interval <select name="interval">{{#intervals}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/intervals}}</select></label>
        <label>Product <select name="product"><option value="">every product</option>{{#products}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/products}}</select></label>
        <label>Storefront <input name="storefront" value="{{storefront}}" placeholder="e.g. USA" size="6"></label>
        <input type="hidden" name="environment" value="{{environment}}">
        <button type="submit">Show</button> <a href="{{csvHref}}" download>CSV</a>
        </form>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        {{#warnings}}<p class="warning" role="status">{{.}}</p>{{/warnings}}
        {{#chart}}<section>{{{svg}}}{{> seriesTable}}</section>{{/chart}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        {{> footer}}
        """

    static let trials = """
        {{> header}}
        <h1>Free trials</h1>
        <p class="note">Trials by the month they started, over the last twelve months.</p>
        {{#charts}}<section><h2><a href="{{href}}">{{title}}</a></h2>{{{svg}}}{{> seriesTable}}</section>{{/charts}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        {{> footer}}
        """

    static let customers = """
        {{> header}}
        <h1>Customers</h1>
        <form class="controls" method="get" action="{{action}}">
        <label>App user id, alias, original transaction id or transaction id <input name="q" value="{{query}}" size="40" required></label>
        <input type="hidden" name="environment" value="{{environment}}"><button type="submit">Find</button>
        </form>
        {{#searched}}{{^results}}<p>No customer goes by “{{query}}”.</p>{{/results}}{{/searched}}
        <ul class="results">{{#results}}<li><a href="{{href}}">{{names}}</a> <span class="note">{{customerId}}</span></li>{{/results}}</ul>
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

    static let refundRequests = """
        {{> header}}
        <h1>Refund requests</h1>
        <p class="note">{{policy}} Apple waits 12 hours for an answer; one is sent only with the customer's consent.</p>
        <section><h2>Waiting</h2><table><thead><tr><th>Customer</th><th>Product</th><th>Reason</th><th>Asked</th><th>Time left</th><th>Status</th><th>Answer</th><th>Decided by</th><th>Note</th><th>Answer now</th></tr></thead>
        <tbody>{{#pending}}<tr data-request="{{id}}"><td><a href="{{customerHref}}">{{customer}}</a></td><td>{{product}}</td><td>{{reason}}</td><td>{{requested}}</td><td data-field="timeLeft">{{timeLeft}}</td><td data-field="status">{{status}}</td><td data-field="preference">{{preference}}</td><td>{{decidedBy}}</td><td>{{note}}</td>
        <td><form class="controls" method="post" action="{{decideAction}}"><input type="hidden" name="csrf" value="{{chrome.csrf}}"><select name="preference" aria-label="preference">{{#preferences}}<option>{{.}}</option>{{/preferences}}<option value="none">no preference</option></select><button type="submit">Send</button></form></td></tr>{{/pending}}</tbody></table>
        {{^pending}}<p>None waiting.</p>{{/pending}}</section>
        <section><h2>Answered and closed</h2><table><thead><tr><th>Customer</th><th>Product</th><th>Reason</th><th>Asked</th><th>Status</th><th>Answer</th><th>Decided by</th><th>Note</th><th>Apple's decision</th></tr></thead>
        <tbody>{{#answered}}<tr data-request="{{id}}"><td><a href="{{customerHref}}">{{customer}}</a></td><td>{{product}}</td><td>{{reason}}</td><td>{{requested}}</td><td data-field="status">{{status}}</td><td data-field="preference">{{preference}}</td><td>{{decidedBy}}</td><td>{{note}}</td><td data-field="outcome">{{outcome}}</td></tr>{{/answered}}</tbody></table>
        {{^answered}}<p>None yet.</p>{{/answered}}</section>
        {{> footer}}
        """

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
        <label>Window (days after the first exposure) <select name="window">{{#windows}}<option{{#selected}} selected{{/selected}}>{{value}}</option>{{/windows}}</select></label><button type="submit">Show</button></form>
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

    static let error = """
        {{> header}}
        <h1>{{heading}}</h1>
        <p class="error" role="alert">{{message}}</p>
        <p><a href="/dashboard">Back to the dashboard</a></p>
        {{> footer}}
        """
}
