import Foundation
import StorekeeperSDK

#if canImport(StoreKit)
    import StorekeeperStoreKit
#endif

/// What the app shows: whether the customer has "pro", by the SDK's answer (the server's, or on the device's own
/// signed transactions when the server cannot be reached).
func hasPro(_ storekeeper: Storekeeper) async -> Bool {
    if let cached = storekeeper.cachedCustomerInfo { return cached.isActive("pro") }
    return (try? await storekeeper.customerInfo().isActive("pro")) ?? false
}

/// At launch, once: on Apple platforms the SDK runs on StoreKit 2. Elsewhere (this sample on Linux) there is no store,
/// so the sample only shows that the SDK links.
@main
struct SampleApp {
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        guard let apiKey = environment["STOREKEEPER_API_KEY"], let server = environment["STOREKEEPER_URL"].flatMap(URL.init(string:))
        else {
            print("set STOREKEEPER_API_KEY and STOREKEEPER_URL to ask a Storekeeper server")
            return
        }
        #if canImport(StoreKit)
            let storekeeper = Storekeeper(configuration: .init(apiKey: apiKey, baseURL: server))
            print("pro:", await hasPro(storekeeper))
        #else
            print("no StoreKit on this platform: \(apiKey.prefix(3))… at \(server) would be asked from an Apple device")
        #endif
    }
}
