import AppStoreModels

/// A customer's state in one environment, as one input of ``CustomerState/combining(_:current:)``.
public struct EnvironmentState: Sendable, Hashable {
    public var environment: Environment
    public var state: CustomerState

    public init(environment: Environment, state: CustomerState) {
        self.environment = environment
        self.state = state
    }
}

extension CustomerState {
    /// One state for an app that takes purchases from several environments (Production, and the Sandbox that
    /// TestFlight and App Review buy in): access paid for in any of them is access.
    ///
    /// - An entitlement or product is `active` when it is active in any environment; the access shown is the best of
    ///   them (the engine's order: active, then the longest), with its `environment`, and `environments` beside it holds
    ///   each environment's own access. With `current` (the environment the caller runs in),
    ///   `activeInCurrentEnvironment` says whether it is active there.
    /// - A group's counting subscription is the best of the environments' (the engine's order), with its environment.
    /// - `subscriptions` and `nonSubscriptions` list every environment's, in the order of `states` (each carries its
    ///   environment already).
    /// - `state` is `active` when any environment's is, else `inactive` when any is, else `new`; `billingIssue` when any
    ///   environment has one; `nextChangeAt` is the earliest of theirs.
    /// - Offer eligibility (introductory, win-back) and a rescission of consent are the `current` environment's (the
    ///   store a purchase would be made in), or the first environment's when the caller did not say.
    ///
    /// Pure: the same states give the same answer whatever else is known. `states` must not be empty (an empty list
    /// gives a `new` customer with nothing listed).
    public static func combining(_ states: [EnvironmentState], current: Environment?) -> CustomerState {
        let home = states.first { $0.environment == current } ?? states.first
        var combined = CustomerState(
            state: .new, billingIssue: false, entitlements: [:], products: [:], groups: [:], subscriptions: [], nonSubscriptions: [],
            introEligibility: home?.state.introEligibility ?? [:], winBackEligibility: home?.state.winBackEligibility ?? [:],
            nextChangeAt: nil, consentRescinded: home?.state.consentRescinded)
        for part in states {
            let state = part.state
            switch state.state {
            case .active: combined.state = .active
            case .inactive: if combined.state == .new { combined.state = .inactive }
            case .new: break
            }
            combined.billingIssue = combined.billingIssue || state.billingIssue
            combined.subscriptions += state.subscriptions
            combined.nonSubscriptions += state.nonSubscriptions
            if let next = state.nextChangeAt { combined.nextChangeAt = min(combined.nextChangeAt ?? next, next) }
            for (group, candidate) in state.groups {
                var candidate = candidate
                candidate.environment = part.environment
                if let existing = combined.groups[group], !Evaluator.counts(candidate, over: existing) { continue }
                combined.groups[group] = candidate
            }
        }
        combined.entitlements = combinedAccess(states, current: current, \.entitlements)
        combined.products = combinedAccess(states, current: current, \.products)
        return combined
    }

    /// Each key's best access over the environments, with the per-environment view beside it.
    private static func combinedAccess(
        _ states: [EnvironmentState], current: Environment?, _ table: KeyPath<CustomerState, [String: AccessState]>
    ) -> [String: AccessState] {
        var combined: [String: AccessState] = [:]
        for part in states {
            for (key, access) in part.state[keyPath: table] {
                var shown = combined[key] ?? AccessState(active: false, expiresDate: nil, productId: nil, transactionId: nil)
                var perEnvironment = shown.environments ?? [:]
                // An environment where nothing ever gave the access adds nothing to the view.
                if access.productId != nil || access.active { perEnvironment[part.environment.rawValue] = access }
                let isFirst = combined[key] == nil
                if access.productId != nil, isFirst || shown.productId == nil || Evaluator.better(access, than: shown) {
                    let kept = perEnvironment
                    shown = access
                    shown.environment = part.environment
                    shown.environments = kept
                } else {
                    shown.environments = perEnvironment
                }
                if let current { shown.activeInCurrentEnvironment = perEnvironment[current.rawValue]?.active ?? false }
                combined[key] = shown
            }
        }
        return combined
    }
}
