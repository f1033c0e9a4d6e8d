import Hummingbird
import StorekeeperCore

/// The context of the customer endpoints: any key of an app (the public key ships in the app).
public struct CustomerContext: ChildRequestContext, APIRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let caller: Caller
    /// The client's address (`ServerContext.client`).
    public let client: String

    public init(context: ServerContext) throws {
        coreContext = context.coreContext
        client = context.client
        caller = try context.caller()
    }
}
