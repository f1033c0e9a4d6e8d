import Mustache

/// The dashboard's page templates (swift-mustache), compiled into the binary so that `storekeeper serve` needs no
/// files beside it. `{{…}}` escapes HTML by Unicode scalar (`DashboardFormat.escaped`: every template, partials too,
/// starts with the pragma that selects it); only the server-drawn SVG is inserted raw (`{{{svg}}}`).
enum DashboardTemplates {
    /// swift-mustache's own HTML escaping goes by `Character`, which misses a quote joined to a combining mark.
    struct ScalarHTML: MustacheContentType {
        func escapeText(_ text: String) -> String { DashboardFormat.escaped(text) }
    }
    static let contentType = "STOREKEEPERHTML"

    static let library: MustacheLibrary = {
        MustacheContentTypes.register(ScalarHTML(), named: contentType)
        var library = MustacheLibrary()
        for (name, text) in templates {
            do { try library.register("{{% CONTENT_TYPE: \(contentType)}}" + text, named: name) } catch {
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
        header{background:#1d1d1f;color:#fff;padding:10px 16px;display:flex;flex-wrap:wrap;gap:12px;align-items:center;font-size:14px}
        header a{color:#fff;text-decoration:none}header a.current{text-decoration:underline}
        .brand{font-weight:600;margin-right:4px}nav{display:flex;flex-wrap:wrap;gap:10px}
        .env{margin-left:auto;display:flex;gap:8px}.env a{padding:2px 8px;border-radius:4px;border:1px solid #666}
        .env a.current{background:#fff;color:#1d1d1f}
        header form{margin:0}header button{background:none;border:1px solid #666;color:#fff;border-radius:4px;cursor:pointer;font-size:14px}
        .who{display:none}@media (min-width:1440px){.who{display:inline}}
        main{max-width:1100px;margin:0 auto;padding:20px}
        .sandbox{background:#ffd60a;color:#1d1d1f;padding:6px 20px;font-weight:600}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:12px;margin-bottom:20px}
        .card{background:#fff;border-radius:8px;padding:12px 16px}.card .label{color:#6e6e73;font-size:13px}
        .card .number{font-size:24px;font-weight:600}
        section{background:#fff;border-radius:8px;padding:12px 16px;margin-bottom:16px}
        .chart{width:100%;height:auto}.chart .grid{stroke:#e5e5ea}.chart .line{stroke:#0071e3;stroke-width:2;fill:#0071e3}
        .chart polyline.line{fill:none}.chart .tick{font-size:11px;fill:#6e6e73}
        .chart .point{fill:transparent}.chart .point:hover{fill:#0071e3}
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
        <form method="post" action="/dashboard/sign-out"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" title="Signed in as {{email}}">Sign out<span class="who"> {{email}}</span></button></form>
        </header>
        {{#sandbox}}<div class="sandbox" role="status">Sandbox data: test purchases, not revenue.</div>{{/sandbox}}
        {{/chrome}}
        <main>
        """

    static let footer = """
        </main>
        </body></html>
        """

    /// A series' points as a table: the chart's numbers for screen readers and copy-paste.
    static let seriesTable = """
        <details><summary>Table</summary>
        <table data-metric="{{metric}}"><thead><tr><th>Start</th>{{#columns}}<th class="n">{{.}}</th>{{/columns}}</tr></thead>
        <tbody>{{#rows}}<tr><td>{{start}}</td>{{#cells}}<td class="n" data-field="{{field}}" data-value="{{raw}}">{{text}}</td>{{/cells}}</tr>{{/rows}}</tbody>
        </table></details>
        """

    static let error = """
        {{> header}}
        <h1>{{heading}}</h1>
        <p class="error" role="alert">{{message}}</p>
        <p><a href="/dashboard">Back to the dashboard</a></p>
        {{> footer}}
        """
}
