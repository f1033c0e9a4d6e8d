// The page of Apple's refund requests.
import StorekeeperCore

struct RefundRequestsPage {
    struct Row {
        var id: String
        var customer: String
        var customerHref: String
        var product: String
        var reason: String
        var requested: String
        var timeLeft: String
        var status: String
        var preference: String
        var decidedBy: String
        var note: String
        var outcome: String
        var decideAction: String?
    }
    var title = "Refund requests"
    var chrome: DashboardChrome
    var policy: String
    var pending: [Row]
    var answered: [Row]
    var preferences: [String]
}

extension DashboardTemplates {
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
}
