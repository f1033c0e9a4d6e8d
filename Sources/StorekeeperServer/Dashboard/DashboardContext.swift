import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// What a dashboard session holds: who signed in (nil on the sign-in page's session) and the token every form of
/// the session must carry back.
public struct DashboardSession: Codable, Sendable, Equatable {
    public var userId: String?
    public var csrf: String

}

/// The context of the dashboard's pages: the session (hummingbird-auth's middleware loads and saves it), the
/// signed-in user once `DashboardSignedIn` has run, and the app of an app's page once `DashboardAppScope` has run.
/// A form posted to a signed-in page has had its session's CSRF token checked by `DashboardFormGuard` before its
/// handler runs.
public struct DashboardContext: ChildRequestContext, SessionRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let sessions: SessionContext<DashboardSession>
    public var user: DashboardUser?
    var appScope: DashboardScope?
    /// The client's address (`ServerContext.client`).
    public let client: String

    public init(context: ServerContext) throws {
        coreContext = context.coreContext
        client = context.client
        sessions = SessionContext()
        user = nil
        appScope = nil
    }

    /// The signed-in user (the pages behind `DashboardSignedIn` always have one).
    func signedIn() throws -> DashboardUser {
        guard let user else { throw DashboardRedirect.signIn(next: nil) }
        return user
    }

    /// The app of the page, its environment and the page's chrome (the pages under `apps/:appId` always have one).
    func scope() throws -> DashboardScope {
        guard let appScope else { throw CoreError.internalError("a dashboard app page ran without DashboardAppScope") }
        return appScope
    }
}

/// CSRF tokens: 32 random bytes, hex; compared in constant time.
enum CSRFToken {
    static func make() -> String { Hex.random(bytes: 32) }

    static func matches(_ given: String?, _ expected: String) -> Bool {
        guard let given, given.utf8.count == expected.utf8.count else { return false }
        return zip(given.utf8, expected.utf8).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
