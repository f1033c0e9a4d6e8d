import AppStoreModels
import Entitlements
import Foundation

/// What the app knows about its customer: the server's answer (or, offline, the device's own computation with the same
/// engine), and the server time it is true at. What it holds is in `CustomerInfo+Contents.swift`: `entitlements`,
/// `products`, `subscriptions`, `purchases`, in the SDK's own types.
public struct CustomerInfo: Sendable, Codable {
    /// Who computed it.
    public enum Source: String, Sendable, Codable {
        /// The Storekeeper server.
        case server
        /// This device, from the signed transactions it holds, because the server could not be reached. Never cached,
        /// and replaced by the server's answer as soon as one arrives.
        case device
    }

    /// The customer's app user id (an anonymous `$device:<UUID>` one until the app logs a user in).
    public var appUserId: String
    /// The app's id on the server; nil in an answer computed on the device before the server was ever reached.
    public var appId: String?
    /// The UUID the SDK passes to StoreKit as the purchase's `appAccountToken`, so that Apple's notifications about the
    /// purchase reach this customer on the server.
    public var appAccountToken: UUID?
    /// The environment the answer is for: the device's own (``currentEnvironment``) when the SDK knew it, else the
    /// app's first.
    public var environment: Environment
    /// The environments the answer covers: every environment the app accepts (an app that takes Production and
    /// Sandbox, so that TestFlight and App Review purchases count), or the one asked for.
    public var environments: [Environment]
    /// The environment this copy of the app buys in, as the store told the SDK (nil while it could not tell).
    public internal(set) var currentEnvironment: Environment?
    /// The server's time when it answered, in milliseconds since 1970 (`requestDate` as a `Date`).
    package var requestMilliseconds: Int64
    /// The server's time when it answered (or, for an answer computed on the device, the trusted time it was computed
    /// at). Expiries are judged against this, advanced by a monotonic clock: see `now`.
    public var requestDate: Date { Date(timeIntervalSince1970: Double(requestMilliseconds) / 1000) }
    /// After a post or a restore: purchases moved to this customer from another one.
    public var transferred: Bool
    /// Who computed it: the server, or this device while the server could not be reached.
    public var source: Source
    /// Whether the answer's signature was checked, and how that went (README "Answers the device can trust").
    public internal(set) var verification: Verification = .notRequested

    /// How far an answer can be trusted to be the server's.
    public enum Verification: String, Sendable, Codable, Hashable {
        /// Not checked: verification is off, or no signing key is configured.
        case notRequested
        /// Signed by the server for this very request (its nonce, path and time).
        case verified
        /// Computed on this device by the entitlement engine from StoreKit's signed transactions.
        case verifiedOnDevice
        /// The signature is missing, broken, for another request or from another key: do not trust it.
        case failed
    }

    /// How long after a verified answer arrived its server time alone tells the time: three days. After that (and for
    /// an answer that failed verification) the device's clock counts too, when it is later: a clock set back then
    /// extends nothing.
    static let serverTimeTrusted: Int64 = 3 * 86_400_000
    /// The entitlement engine's state, which the public properties read (the server's and the SDK's own engine).
    package var state: CustomerState

    /// When the answer arrived, on the SDK's monotonic clock (not encoded: a relaunch restarts it).
    var receivedAt: Duration = .zero
    /// The monotonic clock `receivedAt` is on.
    var monotonic: (@Sendable () -> Duration)?
    /// The device's wall clock, read only as the verification rules say (see `nowMilliseconds`).
    var wall: (@Sendable () -> Date)?

    /// The server's time now: `requestDate` advanced by the monotonic time since the answer arrived. The device's wall
    /// clock, which the user can set, is never read.
    public var now: Date {
        Date(timeIntervalSince1970: Double(nowMilliseconds) / 1000)
    }

    /// Server time now. A verified answer's time, advanced by the monotonic clock, is trusted alone for three days;
    /// after that, and for an answer that failed verification, the later of it and the device's clock. An answer that
    /// was not checked (no signing key) keeps to server time, as before verification existed.
    var nowMilliseconds: Int64 {
        guard let monotonic else { return requestMilliseconds }
        let elapsed = max(0, (monotonic() - receivedAt).milliseconds)
        let serverNow = requestMilliseconds + elapsed
        guard let wall else { return serverNow }
        let device = Int64(wall().timeIntervalSince1970 * 1000)
        switch verification {
        case .notRequested: return serverNow
        case .verified, .verifiedOnDevice: return elapsed > Self.serverTimeTrusted ? max(serverNow, device) : serverNow
        case .failed: return max(serverNow, device)
        }
    }

    /// Whether the entitlement is active now: the server said so, and it has not expired since (by server time).
    public func isActive(_ entitlement: String) -> Bool {
        guard let access = state.entitlements[entitlement] else { return false }
        return Self.grants(access, at: nowMilliseconds)
    }

    /// Whether the product gives access now (a subscription's or a non-consumable's).
    public func isActive(product productId: String) -> Bool {
        guard let access = state.products[productId] else { return false }
        return Self.grants(access, at: nowMilliseconds)
    }

    /// The entitlements active now.
    public var activeEntitlements: Set<String> {
        let now = nowMilliseconds
        return Set(state.entitlements.filter { Self.grants($0.value, at: now) }.keys)
    }

    /// The entitlements active now in any environment the answer covers: what access should follow (a reviewer's
    /// sandbox purchase unlocks the production build under review). The same as ``activeEntitlements``.
    public var activeInAnyEnvironment: Set<String> { activeEntitlements }

    /// The entitlements active now in the environment this copy of the app buys in (``currentEnvironment``): for an app
    /// that wants to tell a TestFlight tester's purchases from the App Store's. While the store has not told the
    /// environment, every environment counts.
    public var activeInCurrentEnvironment: Set<String> {
        let now = nowMilliseconds
        return Set(state.entitlements.filter { isActiveInCurrentEnvironment($0.value, at: now) }.keys)
    }

    /// Whether the entitlement is active now in the environment this copy of the app buys in.
    public func isActiveInCurrentEnvironment(_ entitlement: String) -> Bool {
        guard let access = state.entitlements[entitlement] else { return false }
        return isActiveInCurrentEnvironment(access, at: nowMilliseconds)
    }

    private func isActiveInCurrentEnvironment(_ access: AccessState, at now: Int64) -> Bool {
        guard let current = currentEnvironment else { return Self.grants(access, at: now) }
        if let perEnvironment = access.environments {
            return perEnvironment[current.rawValue].map { Self.grants($0, at: now) } ?? false
        }
        // An answer for one environment: its access is that environment's.
        return environments.contains(current) && Self.grants(access, at: now)
    }

    /// Access the server granted holds until its expiry; a grace period is in `expiresDate` already.
    static func grants(_ access: AccessState, at now: Int64) -> Bool {
        guard access.active else { return false }
        guard let expires = access.expiresDate else { return true }
        return now < expires.millisecondsSince1970
    }

    /// Whether the customer is entitled to an introductory offer in the subscription group.
    public func isEligibleForIntroOffer(group: String) -> Bool {
        state.introEligibility[group]?.eligible ?? true
    }

    /// The same customer, entitlements and source: what `customerInfoUpdates` compares (times do not count).
    func sameContent(as other: CustomerInfo) -> Bool {
        appUserId == other.appUserId && source == other.source && state == other.state
    }

    enum CodingKeys: String, CodingKey {
        case appUserId, appId, appAccountToken, environment, environments, currentEnvironment, requestDate, transferred, source
        case verification
    }

    /// Reads the server's customer answer (or the SDK's cache of one).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        appUserId = try c.decode(String.self, forKey: .appUserId)
        appId = try c.decodeIfPresent(String.self, forKey: .appId)
        appAccountToken = try c.decodeIfPresent(String.self, forKey: .appAccountToken).flatMap(UUID.init(uuidString:))
        environment = try c.decode(Environment.self, forKey: .environment)
        // A server before answers covered several environments sent `environment` alone. An environment this SDK does
        // not know (a newer Apple one) is left out rather than failing the answer.
        let listed = try c.decodeIfPresent([String].self, forKey: .environments)?.compactMap(Environment.init(rawValue:))
        environments = listed.flatMap { $0.isEmpty ? nil : $0 } ?? [environment]
        // Only the SDK's own cache carries it.
        currentEnvironment = try c.decodeIfPresent(Environment.self, forKey: .currentEnvironment)
        requestMilliseconds = try c.decode(Int64.self, forKey: .requestDate)
        transferred = try c.decodeIfPresent(Bool.self, forKey: .transferred) ?? false
        source = try c.decodeIfPresent(Source.self, forKey: .source) ?? .server
        // Only the SDK's own cache carries it; `APIClient` sets it on every answer from the server, whatever it says.
        verification = try c.decodeIfPresent(Verification.self, forKey: .verification) ?? .notRequested
        // The server writes the engine's state beside these fields, in the same object.
        state = try CustomerState(from: decoder)
    }

    /// Writes the same shape the server answers with (the SDK caches it so).
    public func encode(to encoder: any Encoder) throws {
        try state.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(appUserId, forKey: .appUserId)
        try c.encodeIfPresent(appId, forKey: .appId)
        try c.encodeIfPresent(appAccountToken?.uuidString.lowercased(), forKey: .appAccountToken)
        try c.encode(environment, forKey: .environment)
        try c.encode(environments, forKey: .environments)
        try c.encodeIfPresent(currentEnvironment, forKey: .currentEnvironment)
        try c.encode(requestMilliseconds, forKey: .requestDate)
        try c.encode(transferred, forKey: .transferred)
        try c.encode(source, forKey: .source)
        try c.encode(verification, forKey: .verification)
    }

    init(
        appUserId: String, appId: String?, appAccountToken: UUID?, environment: Environment, requestMilliseconds: Int64,
        source: Source, state: CustomerState
    ) {
        self.appUserId = appUserId
        self.appId = appId
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.environments = [environment]
        self.requestMilliseconds = requestMilliseconds
        self.transferred = false
        self.source = source
        self.state = state
    }
}
