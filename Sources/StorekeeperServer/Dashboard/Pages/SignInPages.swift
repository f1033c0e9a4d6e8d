// The sign-in page.
import StorekeeperCore

struct SignInPage {
    var title = "Sign in"
    var csrf: String
    var next: String
    var email: String
    var message: String?
    var chrome: DashboardChrome? = nil
}

extension DashboardTemplates {
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
}
