import Crypto
import Foundation
import ResponseSigning
import StorekeeperSDK
import StorekeeperSDKTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A proxy between the SDK and the real server that changes the customer API's answers the ways an attacker on a
/// jailbroken device, or behind a proxy, would.
final class TamperingTransport: HTTPTransport {
    enum Tamper: Sendable {
        case none
        /// `"active":false` becomes `"active":true` in the body: an entitlement granted by the proxy.
        case flipEntitlement
        /// The earlier untouched answer, sent again to a new request (another nonce).
        case replayEarlier
        /// The answer without its `X-Signature`.
        case stripSignature
        /// The answer signed properly for this request, but by an intermediate key another root vouches for.
        case foreignRoot
    }

    private let tamper = Mutex<Tamper>(.none)
    private let earlier = Mutex<(Data, HTTPURLResponse)?>(nil)
    private let notModifiedCount = Mutex(0)
    private let nonces = Mutex(0)
    private let foreign = Curve25519.Signing.PrivateKey()
    /// Whether reads may be answered 304: off, the SDK's ETag is dropped, so that every read has a body to tamper with.
    let allowsNotModified: Bool
    let base = URLSessionTransport()

    init(allowsNotModified: Bool = false) { self.allowsNotModified = allowsNotModified }

    func set(_ tamper: Tamper) { self.tamper.withLock { $0 = tamper } }

    /// How many requests carried an `X-Nonce`.
    var noncesSent: Int { nonces.withLock { $0 } }

    /// How many answers were 304s.
    var notModifiedAnswers: Int { notModifiedCount.withLock { $0 } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        var request = request
        if !allowsNotModified { request.setValue(nil, forHTTPHeaderField: "If-None-Match") }
        if request.value(forHTTPHeaderField: SignatureHeaders.nonce) != nil { nonces.withLock { $0 += 1 } }
        let (data, response) = try await base.send(request)
        if response.statusCode == 304 { notModifiedCount.withLock { $0 += 1 } }
        guard request.url?.path.hasPrefix("/v1/customers/") == true, response.statusCode == 200 else { return (data, response) }
        switch tamper.withLock({ $0 }) {
        case .none:
            if request.httpMethod == "GET" { earlier.withLock { $0 = (data, response) } }
            return (data, response)
        case .flipEntitlement:
            let text = String(decoding: data, as: UTF8.self)
            return (Data(text.replacingOccurrences(of: #""active":false"#, with: #""active":true"#).utf8), response)
        case .replayEarlier:
            return earlier.withLock { $0 } ?? (data, response)
        case .stripSignature:
            return (data, try Self.response(response, changing: [SignatureHeaders.signature: nil]))
        case .foreignRoot:
            let intermediate = Curve25519.Signing.PrivateKey()
            let publicKey = Array(intermediate.publicKey.rawRepresentation)
            let expiresAt = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000 * 365
            let message = SignedMessage(
                nonce: request.value(forHTTPHeaderField: SignatureHeaders.nonce), path: request.url?.path ?? "",
                requestTime: Int64(response.value(forHTTPHeaderField: SignatureHeaders.requestTime) ?? "") ?? 0,
                etag: response.value(forHTTPHeaderField: "ETag"), body: Array(data))
            let header = IntermediateKeySignature(
                publicKey: publicKey, expiresAt: expiresAt,
                rootSignature: Array(
                    try foreign.signature(for: IntermediateKeySignature.statement(publicKey: publicKey, expiresAt: expiresAt))),
                signature: Array(try intermediate.signature(for: message.bytes)))
            return (data, try Self.response(response, changing: [SignatureHeaders.signature: header.headerValue]))
        }
    }

    static func response(_ response: HTTPURLResponse, changing changes: [String: String?]) throws -> HTTPURLResponse {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        for (name, value) in changes {
            for existing in headers.keys where existing.caseInsensitiveCompare(name) == .orderedSame { headers[existing] = nil }
            if let value { headers[name] = value }
        }
        guard let url = response.url,
            let changed = HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: nil, headerFields: headers)
        else { throw URLError(.badServerResponse) }
        return changed
    }
}

@Suite("Answers the device can trust: the server signs them, the SDK checks them")
struct SignedAnswerTests {
    static func configuration(_ rig: SDKRig, _ transport: TamperingTransport, mode: Storekeeper.VerificationMode)
        throws -> Storekeeper.Configuration
    {
        var configuration = rig.configuration(appUserId: "user-sig", transport: transport)
        configuration.signingKey = Data(try #require(rig.core.responseSigner).rootPublicKey).base64EncodedString()
        configuration.verification = mode
        return configuration
    }

    @Test(
        "informational: an untouched answer is verified; a flipped entitlement, a replayed answer, a stripped signature and a foreign root are each failed",
        arguments: [TamperingTransport.Tamper.flipEntitlement, .replayEarlier, .stripSignature, .foreignRoot])
    func informational(tamper: TamperingTransport.Tamper) async throws {
        try await SDKRig.run { rig in
            let transport = TamperingTransport()
            let sdk = Storekeeper(configuration: try Self.configuration(rig, transport, mode: .informational), store: try rig.store())
            await sdk.waitUntilStarted()
            let good = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(good.verification == .verified)
            #expect(!good.isActive("pro"))

            transport.set(tamper)
            let tampered = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(tampered.verification == .failed)
            if case .flipEntitlement = tamper { #expect(tampered.entitlements["pro"]?.isActive == true) }

            transport.set(.none)
            #expect(try await sdk.customerInfo(policy: .fetchCurrent).verification == .verified)
        }
    }

    @Test("enforced: a tampered answer is an error and the last good answer stays cached; untouched ones pass")
    func enforced() async throws {
        try await SDKRig.run { rig in
            let transport = TamperingTransport()
            let sdk = Storekeeper(configuration: try Self.configuration(rig, transport, mode: .enforced), store: try rig.store())
            await sdk.waitUntilStarted()
            let good = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(good.verification == .verified && !good.isActive("pro"))
            for tamper in [TamperingTransport.Tamper.flipEntitlement, .replayEarlier, .stripSignature, .foreignRoot] {
                transport.set(tamper)
                await #expect(throws: StorekeeperError.self) { try await sdk.customerInfo(policy: .fetchCurrent) }
                let cached = try #require(sdk.cachedCustomerInfo)
                #expect(cached.verification == .verified && !cached.isActive("pro") && cached.requestDate == good.requestDate)
            }
            transport.set(.none)
            let purchased = try await sdk.purchase("pro.monthly")
            #expect(purchased.verification == .verified && purchased.isActive("pro"))
        }
    }

    @Test("a 304 is signed for its request too (over the ETag): the cached answer stays verified")
    func notModified() async throws {
        try await SDKRig.run { rig in
            let transport = TamperingTransport(allowsNotModified: true)
            var configuration = try Self.configuration(rig, transport, mode: .enforced)
            configuration.staleAfter = .zero
            let sdk = Storekeeper(configuration: configuration, store: try rig.store())
            await sdk.waitUntilStarted()
            _ = try await sdk.customerInfo(policy: .fetchCurrent)
            // Nothing changed: the server answers 304, signed over this request's nonce and the ETag.
            let again = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(transport.notModifiedAnswers >= 1)
            #expect(again.verification == .verified)
        }
    }

    @Test("without a signing key answers are not checked; with verification disabled no nonce is sent")
    func notRequested() async throws {
        try await SDKRig.run { rig in
            let transport = TamperingTransport()
            var configuration = rig.configuration(appUserId: "user-plain", transport: transport)
            let sdk = Storekeeper(configuration: configuration, store: try rig.store())
            await sdk.waitUntilStarted()
            #expect(try await sdk.customerInfo(policy: .fetchCurrent).verification == .notRequested)
            sdk.shutdown()
            configuration.signingKey = Data(try #require(rig.core.responseSigner).rootPublicKey).base64EncodedString()
            configuration.verification = .disabled
            transport.set(.flipEntitlement)
            let disabled = Storekeeper(configuration: configuration, store: try rig.store())
            await disabled.waitUntilStarted()
            #expect(try await disabled.customerInfo(policy: .fetchCurrent).verification == .notRequested)
            #expect(transport.noncesSent == 0)
        }
    }

    @Test("offline, the device's own answer from StoreKit's signed transactions is verifiedOnDevice")
    func onDevice() async throws {
        try await SDKRig.run { rig in
            let transport = FaultyTransport()
            var configuration = rig.configuration(appUserId: "user-dev", transport: transport)
            configuration.signingKey = Data(try #require(rig.core.responseSigner).rootPublicKey).base64EncodedString()
            configuration.bundledCatalog = try JSONEncoder().encode(sdkCatalog)
            transport.set(.down)
            let sdk = Storekeeper(configuration: configuration, store: try rig.store())
            await sdk.waitUntilStarted()
            let offline = try await sdk.purchase("pro.monthly")
            #expect(offline.source == .device && offline.verification == .verifiedOnDevice && offline.isActive("pro"))
        }
    }

    /// Clocks the test moves by hand.
    final class HandClock: Sendable {
        let monotonic = Mutex<Duration>(.seconds(1000))
        let wall = Mutex<Date>(Date())
        var clock: SDKClock { SDKClock(monotonic: { self.monotonic.withLock { $0 } }, wall: { self.wall.withLock { $0 } }) }
    }

    @Test(
        "the device clock: a verified answer's server time alone counts for 3 days (a clock 40 days ahead expires nothing); after that the later clock counts; an unchecked answer keeps to server time"
    )
    func deviceClock() async throws {
        try await SDKRig.run { rig in
            for signed in [true, false] {
                let hand = HandClock()
                let transport = TamperingTransport()
                var configuration = rig.configuration(
                    device: signed ? "signed" : "plain", appUserId: "user-clock-\(signed)", transport: transport)
                if signed { configuration.signingKey = Data(try #require(rig.core.responseSigner).rootPublicKey).base64EncodedString() }
                configuration.clock = hand.clock
                configuration.staleAfter = .seconds(365 * 86_400)
                let sdk = Storekeeper(configuration: configuration, store: try rig.store(customer: "clock-\(signed)"))
                await sdk.waitUntilStarted()
                let bought = try await sdk.purchase("pro.monthly")
                #expect(bought.verification == (signed ? .verified : .notRequested) && bought.isActive("pro"))
                hand.wall.withLock { $0 = $0.addingTimeInterval(40 * 86_400) }
                hand.monotonic.withLock { $0 += .seconds(2 * 86_400) }
                #expect(try #require(sdk.cachedCustomerInfo).isActive("pro"))
                hand.monotonic.withLock { $0 += .seconds(86_400 + 60) }
                // Three days and a minute after the verified answer: the device's clock, 40 days ahead, counts now.
                #expect(try #require(sdk.cachedCustomerInfo).isActive("pro") == !signed)
                sdk.shutdown()
            }
        }
    }
}
