import Foundation
import Integrations
import Storage

/// One request's outcome: the answer (or why there was none), what it means for each event, how long it took, and
/// the answer's body and failure. Everything but `answer` has the destination's secrets removed (it is what is stored
/// and shown); `answer` itself is only read for its status.
struct SendOutcome: Sendable {
    var answer: AttemptAnswer
    var verdicts: [AttemptVerdict]
    var latencyMs: Int64
    var redactedBody: String?
    var redactedFailure: String?
}

/// Builds a destination's protocol from its stored record and secrets, and sends requests with the transport.
struct DeliverySender: Sendable {
    let transport: DeliveryTransport

    /// The destination a stored record describes, as of `now` (a webhook's signing secrets in force then).
    static func destination(_ record: IntegrationRecord, secrets: DestinationSecrets, now: Int64) throws -> any Destination {
        let config = try IntegrationAdministration.decode(record.config)
        func required(_ value: String?, _ name: String) throws(IntegrationError) -> String {
            guard let value else { throw IntegrationError(.invalidConfiguration, "the stored configuration has no \(name)") }
            return value
        }
        switch DestinationKind(rawValue: record.kind) {
        case .webhook:
            return WebhookDestination(
                url: try required(config["url"], "url"), secrets: try secrets.signingSecrets(at: now),
                authorization: secrets.fields["authorization"])
        case .slack:
            return SlackDestination(url: try required(secrets.fields["url"], "url"))
        case .telegram:
            return TelegramDestination(
                baseURL: config["baseURL"] ?? DestinationKind.telegramBaseURL,
                botToken: try required(secrets.fields["botToken"], "botToken"),
                chatId: try required(config["chatId"], "chatId"))
        case .amplitude:
            return AmplitudeDestination(
                url: AmplitudeDestination.url(region: config["region"], baseURL: config["baseURL"]),
                apiKey: try required(secrets.fields["apiKey"], "apiKey"), naming: naming(config))
        case .mixpanel:
            var account: ServiceAccount?
            if let username = config["serviceAccountUsername"] {
                account = ServiceAccount(
                    username: username, secret: try required(secrets.fields["serviceAccountSecret"], "serviceAccountSecret"))
            }
            return MixpanelDestination(
                baseURL: MixpanelDestination.baseURL(region: config["region"], override: config["baseURL"]),
                projectToken: try required(secrets.fields["projectToken"], "projectToken"), projectId: config["projectId"],
                serviceAccount: account, naming: naming(config))
        case nil:
            throw IntegrationError(.invalidConfiguration, "unknown integration kind '\(record.kind)'")
        }
    }

    private static func naming(_ config: [String: String]) -> AnalyticsNaming {
        AnalyticsNaming(config["preset"].flatMap(AnalyticsNaming.Preset.init(rawValue:)) ?? .storekeeper)
    }

    /// Every secret value of a destination, to remove from what is stored and shown.
    static func secretValues(_ secrets: DestinationSecrets) -> [String] {
        (Array(secrets.fields.values) + secrets.signing.map(\.secret)).filter { $0.count >= 4 }
    }

    static func redact(_ text: String, _ secrets: [String]) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "[redacted]") }
    }

    /// Sends to a stored destination. Nothing escapes: a destination that cannot be built from what is stored (an
    /// `IntegrationError`, a setting) is an outcome that disables it, with the reason.
    func send(_ events: [OutboundEvent], to record: IntegrationRecord, secrets: DestinationSecrets, now: Int64) async -> SendOutcome {
        let destination: any Destination
        do {
            destination = try Self.destination(record, secrets: secrets, now: now)
        } catch {
            let reason = "the destination cannot be used: \(error)"
            return SendOutcome(
                answer: AttemptAnswer(failure: reason, permanent: true), verdicts: events.map { _ in .disableDestination(reason: reason) },
                latencyMs: 0, redactedBody: nil, redactedFailure: reason)
        }
        return await send(events, via: destination, secrets: Self.secretValues(secrets), now: now)
    }

    func send(_ events: [OutboundEvent], via destination: any Destination, secrets: [String], now: Int64) async -> SendOutcome {
        let started = ContinuousClock.now
        var answers: [AttemptAnswer] = []
        do {
            for request in try destination.requests(for: events, now: now) {
                let answer = await transport.send(request)
                answers.append(answer)
                if !destination.proceeds(after: answer) { break }
            }
        } catch {
            answers.append(AttemptAnswer(failure: "the request cannot be made: \(error.message)", permanent: true))
        }
        let answer = answers.last ?? AttemptAnswer(failure: "nothing to send")
        let latency = (ContinuousClock.now - started).wholeMilliseconds
        var verdicts = destination.verdicts(answers, for: events, now: now).map { $0.mapReason { Self.redact($0, secrets) } }
        if verdicts.count != events.count {
            verdicts = events.map { _ in .retry(reason: "the destination's answer could not be read per event", retryAfter: nil) }
        }
        return SendOutcome(
            answer: answer, verdicts: verdicts, latencyMs: latency,
            redactedBody: answer.status == nil ? nil : Self.redact(answer.bodyText, secrets),
            redactedFailure: answer.failure.map { Self.redact($0, secrets) })
    }
}
