import Foundation
import StorekeeperSDK
import StorekeeperSDKTesting
import Testing

// The README's "In your app" snippet, compiled here and run against the real server: the test below checks that the
// README shows exactly this text, so neither can drift. Edit both together.
// README-SNIPPET-BEGIN
enum PaywallColorTest: SplitTest {
    static let identifier = "button-color"
    enum Group: String, SplitTestGroup { case control, red, blue }
}

func inYourApp(apiKey: String, server: URL, store: any StoreClient) async throws -> Bool {
    // At launch, once (on Apple platforms, `Storekeeper(configuration:)` uses StoreKit 2).
    let storekeeper = Storekeeper(configuration: .init(apiKey: apiKey, baseURL: server), store: store)

    // Check an entitlement: what was cached at the last launch at once, then the server's answer.
    var isPro = storekeeper.cachedCustomerInfo?.isActive("pro") ?? false
    isPro = try await storekeeper.customerInfo().isActive("pro")

    // Buy: the answer includes the purchase, even when the server cannot be reached right now.
    if !isPro {
        isPro = try await storekeeper.purchase("pro.monthly").isActive("pro")
    }

    // Show a placement: the server picks the paywall (and the split test's variant).
    let paywall = try await storekeeper.placement("onboarding").paywall
    print("show", paywall.id, "with", paywall.products)

    // Run a split test: a sticky group; hit() when the customer sees it (recorded once).
    let test = await storekeeper.splitTest(PaywallColorTest.self)
    switch test.group {
    case .control: print("the usual button")
    case .red, .blue: print("a \(test.group.rawValue) button")
    }
    await test.hit()

    // React to changes (a renewal, a refund, another device's purchase).
    Task {
        for await info in storekeeper.customerInfoUpdates { print("pro:", info.isActive("pro")) }
    }
    return isPro
}
// README-SNIPPET-END

@Suite("The README's quick start")
struct QuickStartTests {
    static func text(between begin: String, and end: String, in text: String) -> String? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else { return nil }
        return text[start.upperBound..<stop.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("the README's snippet is this file's, word for word")
    func readmeShowsTheCompiledSnippet() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: here, encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = try #require(Self.text(between: "// README-SNIPPET-BEGIN", and: "// README-SNIPPET-END", in: source))
        let shown = try #require(
            Self.text(between: "<!-- snippet: Tests/StorekeeperSDKTests/QuickStartTests.swift -->\n```swift", and: "```", in: readme))
        #expect(shown == compiled)
    }

    @Test("the snippet runs against the server: it buys, and the customer is pro")
    func snippetRuns() async throws {
        try await SDKRig.run { rig in
            try await SplitTestTests.setUp(rig)
            let store = try rig.store()
            let configuration = rig.configuration()
            // The snippet configures the SDK itself: its storage is the default directory, kept apart for this test.
            setenv("XDG_DATA_HOME", configuration.storage.map { ($0 as? FileStorage)?.directory.path ?? "" } ?? "", 1)
            #expect(try await inYourApp(apiKey: rig.app.publicKey, server: rig.baseURL, store: store))
        }
    }
}
