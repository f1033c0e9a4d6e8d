import AppStore
import Entitlements
import Experiments
import Foundation
import Storage

/// Apple's Get Retention Message requests, answered per customer: a split test on the placement `cancel` decides for
/// the customers it includes (the variant's paywall config carries the answer under `retention`), the app's retention
/// policy for everyone else. Every request and its answer is recorded (a request Apple retries gets the first answer
/// again), and a customer in the test is exposed at once, so the test's results are the revenue each arm kept.
public struct RetentionMessaging: Sendable {
    let database: StorageDatabase
    let customers: CustomerReads
    let catalogs: ServingCatalogCache
    let administration: AppAdministration
    let appleAPI: AppleAPIAccess?
    let clock: @Sendable () -> Date

    /// The placement whose experiment decides retention answers.
    public static let placement = "cancel"

    /// Verifies Apple's request, chooses the answer and records it.
    public func answer(_ signedPayload: String, app: AppRuntime) async throws -> RealtimeResponseBody {
        let request: DecodedRealtimeRequestBody
        do {
            request = try await app.verifyRealtimeRequest(signedPayload)
        } catch {
            throw CoreError.verification(error)
        }
        // verifyRealtimeRequest refuses a payload missing any of these.
        guard let original = request.originalTransactionId, let productId = request.productId, let locale = request.userLocale,
            let requestId = request.requestIdentifier, let environment = request.environment, let signedDate = request.signedDate
        else { throw CoreError.internalError("a verified retention request lacks a required field") }
        let now = clock().millisecondsSince1970
        let customerId = try await database.reading { try await $0.owner(app: app.id, originalTransactionId: original) }
        let state = try await customers.state(customerId: customerId, app: app, environment: environment).state()
        let subscription = state.subscriptions.first { $0.originalTransactionId == original }

        var decidedBy: String
        var answer: RetentionAnswer
        let test = try await experimentArm(customerId: customerId, state: state, app: app)
        if let test, let chosen = test.answer {
            (answer, decidedBy) = (chosen, test.label)
        } else {
            let policy = app.config.retentionPolicy ?? RetentionPolicy()
            var spend: Double?
            if policy.needsSpend, let customerId {
                spend = try await database.reading {
                    try await $0.spend(customerId: customerId, environment: environment.rawValue, before: now + 1).netUSD
                }
            }
            let decision = policy.decide(
                RetentionFacts(productId: productId, userLocale: locale, subscription: subscription, lifetimeSpendUSD: spend, now: now))
            answer = decision.answer
            decidedBy = test.map { "\($0.label)+\(decision.decidedBy)" } ?? decision.decidedBy
        }
        let body = try Self.body(answer, productId: productId, app: app, now: now)
        let record = RetentionRequestRecord(
            appId: app.id, requestIdentifier: requestId, environment: environment.rawValue, originalTransactionId: original,
            customerId: customerId, productId: productId, userLocale: locale, answer: try Self.json(body),
            messageIdentifier: body.messageIdentifier, decidedBy: decidedBy, signedDate: signedDate.millisecondsSince1970,
            answeredAt: now)
        let stored = try await database.writing { session in
            if let test, let customerId, test.newAssignment {
                _ = try await session.assign(
                    app: app.id, experiment: test.key, phase: test.phase, customer: customerId, variant: test.variant, at: now)
            }
            if let test, test.inExperiment, let customerId {
                try await session.recordExposure(
                    app: app.id,
                    ExposureRecord(
                        experimentKey: test.key, phase: test.phase, customerId: customerId, variant: test.variant,
                        placementId: Self.placement, environment: environment.rawValue, exposedAt: now))
            }
            return try await session.record(record)
        }
        if let test, test.inExperiment, let customerId {
            catalogs.remember(app: app.id, experiment: test.key, phase: test.phase, customer: customerId, variant: test.variant)
        }
        guard stored != record else { return body }
        // Apple asked again: the first answer, as it was given.
        do {
            return try Self.decoder.decode(RealtimeResponseBody.self, from: Data(stored.answer.utf8))
        } catch {
            throw CoreError.internalError("the stored answer of retention request \(requestId) does not decode")
        }
    }

    /// The arm of the running split test on `cancel` that includes the customer, if any.
    struct Arm: Sendable {
        var key: String
        var phase: Int
        var variant: String
        /// The variant's answer; nil: the variant leaves the answer to the policy.
        var answer: RetentionAnswer?
        /// The assignment is new: it is stored with the answer.
        var newAssignment: Bool
        /// The experiment runs, so the customer is exposed; once stopped, its control or winner is served to everyone
        /// and no one is exposed.
        var inExperiment: Bool
        var label: String { inExperiment ? "experiment:\(key)/\(variant)" : "placement:\(RetentionMessaging.placement)/\(variant)" }
    }

    private func experimentArm(customerId: String?, state: CustomerState, app: AppRuntime) async throws -> Arm? {
        guard let customerId else { return nil }
        let catalog = try await catalogs.catalog(app: app.id)
        guard let served = catalog.served[Self.placement] else { return nil }
        let definition = served.experiment.definition
        // Not running: the control or the winner for everyone, as on any placement.
        guard definition.status == .running else {
            let outside = served.experiment.assign(userId: customerId).variant
            return Arm(
                key: definition.key, phase: definition.phase, variant: outside,
                answer: try served.paywalls[outside].flatMap { try Self.retentionAnswer(in: $0) }, newAssignment: false,
                inExperiment: false)
        }
        // Apple's request names no app user: the customer is what is hashed.
        var variant = catalogs.assignment(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId)
        if variant == nil {
            variant = try await database.reading {
                try await $0.assignment(app: app.id, experiment: definition.key, phase: definition.phase, customer: customerId)
            }
        }
        var isNew = false
        if variant == nil {
            let attributes = UserAttributes(
                customerState: state.state == .active ? .active : state.state == .inactive ? .inactive : .new,
                firstSeenAt: try await customers.firstSeen(customerId: customerId))
            let assignment = served.experiment.assign(userId: customerId, attributes: attributes)
            guard assignment.inExperiment, assignment.newStickyAssignment != nil else { return nil }
            variant = assignment.variant
            isNew = true
        }
        guard let variant else { return nil }
        let answer = try served.paywalls[variant].flatMap { try Self.retentionAnswer(in: $0) }
        return Arm(key: definition.key, phase: definition.phase, variant: variant, answer: answer, newAssignment: isNew, inExperiment: true)
    }

    /// One of each for every request: building them per call is a measurable cost.
    private static let decoder = JSONDecoder()
    private static let encoder = JSONEncoder()

    /// A paywall's `config.retention`, when it has one.
    static func retentionAnswer(in paywall: Paywall) throws(CoreError) -> RetentionAnswer? {
        guard case .object(let config) = paywall.config, let value = config["retention"] else { return nil }
        do {
            return try decoder.decode(RetentionAnswer.self, from: encoder.encode(value))
        } catch {
            throw .internalError("paywall \(paywall.id)'s config.retention is not a retention answer")
        }
    }

    /// Apple's body for an answer; a promotional offer is signed now with the app's offer key.
    static func body(_ answer: RetentionAnswer, productId: String, app: AppRuntime, now: Int64) throws -> RealtimeResponseBody {
        guard let message = answer.messageIdentifier?.lowercased() else { return RealtimeResponseBody() }
        switch answer.type {
        case .none: return RealtimeResponseBody()
        case .message: return RealtimeResponseBody(message: .init(messageIdentifier: message))
        case .alternateProduct:
            return RealtimeResponseBody(
                alternateProduct: .init(
                    messageIdentifier: message, productId: answer.productId ?? productId, billingPlanType: answer.billingPlanType))
        case .promotionalOffer:
            guard let signer = try app.config.offerSigner(), let offer = answer.offerIdentifier else {
                throw CoreError.conflict("the retention answer is a promotional offer, and the app has no offerSigningKey to sign it")
            }
            let signature = try signer.promotionalOfferSignatureV2(
                productId: answer.productId ?? productId, offerIdentifier: offer,
                now: Date(timeIntervalSince1970: Double(now) / 1000))
            return RealtimeResponseBody(promotionalOffer: .init(messageIdentifier: message, promotionalOfferSignatureV2: signature))
        }
    }

    static func json(_ body: RealtimeResponseBody) throws(CoreError) -> String {
        do {
            return String(decoding: try JSONEncoder.sortedKeys.encode(body), as: UTF8.self)
        } catch {
            throw .internalError("a retention answer does not encode as JSON")
        }
    }

    // MARK: - Policy and requests

    public func policy(of app: AppRuntime) -> RetentionPolicy? { app.config.retentionPolicy }

    /// Replaces (or, with nil, removes) the app's retention policy.
    public func setPolicy(_ policy: RetentionPolicy?, of app: AppRuntime) async throws {
        var config = app.config
        config.retentionPolicy = policy
        try await administration.update(app, to: config)
    }

    /// An app's requests in one environment, newest first.
    public func requests(app: AppRuntime, environment: Environment, limit: Int = 200) async throws -> [RetentionRequestView] {
        try await database.reading { try await $0.retentionRequests(app: app.id, environment: environment.rawValue, limit: limit) }
            .map(RetentionRequestView.init)
    }

    // MARK: - Apple's Retention Messaging API

    /// The app's App Store Server API client, for the message, image, default-message, URL and performance-test calls.
    public func appleClient(app: AppRuntime, environment: Environment) async throws -> AppStoreServerAPIClient {
        guard let appleAPI, let client = try await appleAPI.client(app: app, environment: environment) else {
            throw CoreError.conflict(
                "the app has no serverAPI credentials: the Retention Messaging API needs the app's In-App Purchase key")
        }
        return client
    }
}

/// One retention request as the admin API lists it.
public struct RetentionRequestView: Codable, Sendable, Hashable {
    public var requestIdentifier: String
    public var environment: String
    public var originalTransactionId: String
    public var customerId: String?
    public var productId: String
    public var userLocale: String
    public var answer: RealtimeResponseBody
    public var decidedBy: String
    public var signedDate: Int64
    public var answeredAt: Int64

    init(_ record: RetentionRequestRecord) {
        requestIdentifier = record.requestIdentifier
        environment = record.environment
        originalTransactionId = record.originalTransactionId
        customerId = record.customerId
        productId = record.productId
        userLocale = record.userLocale
        answer = (try? JSONDecoder().decode(RealtimeResponseBody.self, from: Data(record.answer.utf8))) ?? RealtimeResponseBody()
        decidedBy = record.decidedBy
        signedDate = record.signedDate
        answeredAt = record.answeredAt
    }
}
