// This module verifies and signs with swift-crypto and swift-certificates, which the package fetches only with its
// `Server` trait (the default) or its `SDKTesting` trait: an app that tests with StorekeeperSDKTesting says
// `traits: ["SDKTesting"]` on its `.package` line (README "In your app").
#if !Server && !SDKTesting
    #error("StorekeeperSDKTesting needs the package's SDKTesting trait: .package(url: …, traits: [\"SDKTesting\"])")
#endif
