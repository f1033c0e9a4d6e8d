import Hummingbird
import StorekeeperCore

/// The context of the admin endpoints: a secret key only; on an app's path (`/v1/apps/{appId}/…`), a key of that
/// app (another app's key is answered as if the app did not exist).
public struct AdminContext: ChildRequestContext, APIRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let caller: Caller
    public var app: AppRuntime { caller.app }

    public init(context: ServerContext) throws {
        coreContext = context.coreContext
        let caller = try context.caller()
        guard caller.keyKind == .secret else {
            throw CoreError.forbidden("this endpoint needs a secret key (sk_…); public keys are for the customer endpoints")
        }
        if let appId = context.parameters.get("appId"), appId != caller.app.id {
            throw CoreError.appNotFound(appId: appId)
        }
        self.caller = caller
    }
}
