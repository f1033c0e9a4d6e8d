import AppStore
import Entitlements

/// What a customer answer covers: one environment, or every environment the app accepts.
///
/// An app that takes both Production and Sandbox (the only way to serve TestFlight and App Review, who buy in the
/// Sandbox against the production build) answers for both unless the request narrows it with `?environment=`, so that
/// access paid for in either is access; an app of one environment answers for that one, as it always has.
public enum StateView: Sendable, Hashable {
    /// One environment's state, as stored.
    case one(Environment)
    /// The states of these environments (the app's, in its order) as one (``CustomerState/combining(_:current:)``),
    /// with the environment the caller runs in when it said.
    case every([Environment], current: Environment?)

    /// The environment the answer names as its own: the one, the caller's, or the app's first.
    public var environment: Environment {
        switch self {
        case .one(let environment): environment
        case .every(let environments, let current): current ?? environments.first ?? .production
        }
    }

    /// The environments the answer covers.
    public var environments: [Environment] {
        switch self {
        case .one(let environment): [environment]
        case .every(let environments, _): environments
        }
    }
}

extension AppRuntime {
    /// What a customer read answers: `?environment=` narrows to one of the app's environments; without it, every
    /// environment the app accepts (one for most apps). `current` (`?currentEnvironment=`) names the environment the
    /// caller runs in, which must be one of the app's too; it never narrows.
    public func stateView(environment requested: String?, current: String?) throws(CoreError) -> StateView {
        if requested != nil { return .one(try environment(requested)) }
        let current = try current.map { text throws(CoreError) in try environment(text, field: "currentEnvironment") }
        let environments = config.allowedEnvironments
        guard environments.count > 1 else { return .one(defaultEnvironment) }
        return .every(environments, current: current)
    }
}
