import Experiments
import Foundation

extension Storekeeper {
    /// The paywall to show at a placement, and the experiment variant that chose it; the server decides.
    public func placement(_ placementId: String) async throws(StorekeeperError) -> Placement {
        try await api.placement(placementId, for: appUserId, environment: await storeEnvironment())
    }

    /// The customer's group in a split test. The server decides (so a test can be stopped or rolled back remotely);
    /// when it cannot be reached, the group stored from its last answer, else the same hash the server uses on the
    /// cached definitions, else the control. A variant the enum does not know falls back to the control, logged.
    public func splitTest<Test: SplitTest>(_ test: Test.Type) async -> SplitTestAssignment<Test> {
        let key = Test.identifier
        let appUserId = self.appUserId
        if let decided = await serverAssignment(key: key, appUserId: appUserId) {
            splitTestStorage.store(decided, test: key)
            return assignment(Test.self, decided, source: .server)
        }
        let definition = cachedDefinitions?.experiments.first { $0.key == key }
        if let stored = splitTestStorage.assignment(test: key), stored.appUserId == appUserId,
            definition.map({ $0.phase == stored.phase }) ?? true
        {
            return assignment(Test.self, stored, source: .stored)
        }
        if let definition, let local = localAssignment(definition, appUserId: appUserId) {
            return assignment(Test.self, local, source: .local)
        }
        let control = Test.Group.fallbackGroup.rawValue
        return assignment(
            Test.self,
            StoredSplitTestAssignment(
                variant: control, phase: definition?.phase ?? 0, inExperiment: false, placement: "", appUserId: appUserId),
            source: .fallback)
    }

    var cachedDefinitions: ExperimentDefinitionSet? { definitionsValue }

    /// The server's answer for the experiment's placement: its variant while the customer is in the running
    /// experiment, else what everyone outside it gets (the control, or the winner once it is stopped).
    private func serverAssignment(key: String, appUserId: String) async -> StoredSplitTestAssignment? {
        guard let definitions = await refreshDefinitions(),
            let definition = definitions.experiments.first(where: { $0.key == key }), let placementId = definition.placement
        else { return nil }
        let answer: Placement
        do {
            answer = try await api.placement(placementId, for: appUserId, environment: await storeEnvironment())
        } catch {
            log("split test \(key): the server could not be asked (\(error)); deciding on the device")
            return nil
        }
        if let experiment = answer.experiment, experiment.key == key {
            return StoredSplitTestAssignment(
                variant: experiment.variant, phase: experiment.phase, inExperiment: true, placement: placementId, appUserId: appUserId)
        }
        let outside = PreparedExperiment(definition).assign(userId: appUserId)
        return StoredSplitTestAssignment(
            variant: outside.variant, phase: definition.phase, inExperiment: false, placement: placementId, appUserId: appUserId)
    }

    /// The server's assignment rule run on the device: GrowthBook's hash over the cached definition, with the
    /// attributes the device knows (its customer state).
    func localAssignment(_ definition: ExperimentDefinition, appUserId: String) -> StoredSplitTestAssignment? {
        let state = cachedCustomerInfo.flatMap { ExperimentDefinition.CustomerState(rawValue: $0.state.state.rawValue) }
        let assigned = PreparedExperiment(definition).assign(userId: appUserId, attributes: UserAttributes(customerState: state))
        return StoredSplitTestAssignment(
            variant: assigned.variant, phase: definition.phase, inExperiment: assigned.inExperiment && definition.status == .running,
            placement: definition.placement ?? "", appUserId: appUserId)
    }

    private func assignment<Test: SplitTest>(
        _ test: Test.Type, _ decided: StoredSplitTestAssignment, source: SplitTestAssignment<Test>.Source
    ) -> SplitTestAssignment<Test> {
        let group: Test.Group
        if let known = Test.Group(rawValue: decided.variant) {
            group = known
        } else {
            log("split test \(Test.identifier): variant '\(decided.variant)' is not a case of \(Test.Group.self); showing the control")
            group = Test.Group.fallbackGroup
        }
        return SplitTestAssignment(
            group: group, variant: decided.variant, phase: decided.phase, inExperiment: decided.inExperiment, source: source,
            placement: decided.placement,
            recorder: { [weak self] test, variant, phase, placement in
                await self?.recordExposure(test: test, variant: variant, phase: phase, placement: placement)
            })
    }

    /// Records an exposure once per test and phase across launches: through the app's analytics when it gave one, else
    /// the server's exposures endpoint (which keeps the first only). A failure is logged and tried again next hit.
    func recordExposure(test: String, variant: String, phase: Int, placement: String) async {
        guard !splitTestStorage.wasExposed(test: test, phase: phase) else { return }
        do {
            if let splitTestAnalytics {
                try await splitTestAnalytics.recordExposure(test: test, group: variant, phase: phase)
            } else {
                try await api.expose(
                    .init(experiment: test, variant: variant, phase: phase, placement: placement), for: appUserId,
                    environment: await storeEnvironment())
            }
            splitTestStorage.markExposed(test: test, phase: phase)
        } catch {
            log("split test \(test): the exposure could not be recorded (\(error)); it is tried again at the next hit")
        }
    }
}
