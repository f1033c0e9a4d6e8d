import Foundation
import Testing

@testable import Experiments

@Suite("Definitions: defaults, plain errors, recommendations")
struct DefinitionDecodingTests {
    func decode(_ json: String, strict: Bool = false) throws(ExperimentError) -> ExperimentDefinition {
        try ExperimentDefinition.decode(Data(json.utf8), requireWeightsSumToOne: strict)
    }

    @Test("a minimal definition: seed = key, phase 0, equal weights, coverage 1, a draft")
    func defaults() throws {
        let definition = try decode(#"{"key": "onboarding-2026", "variants": [{"key": "control"}, {"key": "b"}]}"#)
        #expect(definition.effectiveSeed == "onboarding-2026" && definition.phase == 0 && definition.coverage == 1)
        #expect(definition.status == .draft && definition.normalisedWeights == [0.5, 0.5])
        // A draft assigns nobody: the control for everyone until it is started.
        #expect(Assigner.assign(definition, userId: "u1").reason == .notRunning)
    }

    @Test(
        "decoding errors name the field in plain words",
        arguments: [
            (#"{"variants": [{"key": "a"}, {"key": "b"}]}"#, "key", "is required"),
            (#"{"key": "e", "variants": [{"key": "a", "weight": "x"}, {"key": "b"}]}"#, "variants[0].weight", "must be a number"),
            (#"{"key": "e", "phase": 1.5, "variants": [{"key": "a"}, {"key": "b"}]}"#, "phase", "must be a whole number"),
            (#"{"key": "e", "variants": {"key": "a"}}"#, "variants", "must be a list"),
            (#"{"key": "e", "status": "on", "variants": [{"key": "a"}, {"key": "b"}]}"#, "status", "'on' is not one of the allowed values"),
            (
                #"{"key": "e", "variants": [{"key": "a"}, {"key": "b"}], "targeting": {"storefront": ["USA"]}}"#, "targeting.storefront",
                "'storefront' is not a field of targeting (known: customerStates, maxAppVersion, minAppVersion, newUsersOnly, storefronts)"
            ),
        ])
    func plainErrors(json: String, field: String, message: String) {
        #expect(throws: ExperimentError.invalidField(field, message)) { try decode(json) }
    }

    @Test("a field this version does not know (a newer server's): plain decoding, as the SDK's, reads past it; decode(_:) refuses it")
    func tolerantReader() throws {
        let json = #"""
            {"key": "e", "status": "running", "rollout": 1, "variants": [{"key": "a", "icon": "x"}, {"key": "b"}],
             "targeting": {"storefronts": ["USA"], "platform": "ios"}, "namespace": {"id": "n", "start": 0, "end": 0.5, "salt": 2}}
            """#
        let read = try JSONDecoder().decode(ExperimentDefinition.self, from: Data(json.utf8))
        #expect(read.status == .running && read.variants.map(\.key) == ["a", "b"])
        #expect(read.targeting?.storefronts == ["USA"] && read.namespace == Namespace(id: "n", start: 0, end: 0.5))
        #expect(throws: ExperimentError.self) { try decode(json) }
        #expect(throws: ExperimentError.invalidField("namespace.salt", "'salt' is not a field of a namespace (known: end, id, start)")) {
            try decode(
                #"{"key": "e", "variants": [{"key": "a"}, {"key": "b"}], "namespace": {"id": "n", "start": 0, "end": 1, "salt": 2}}"#)
        }
    }

    @Test("the server's rule: weights given add up to 1 (±0.001); relative weights stay fine on the command line")
    func weights() throws {
        let relative = #"{"key": "e", "variants": [{"key": "a", "weight": 1}, {"key": "b", "weight": 3}]}"#
        #expect(try decode(relative).normalisedWeights == [0.25, 0.75])
        #expect(throws: ExperimentError.invalidField("variants", "the variant weights add up to 4.0; they must add up to 1 (±0.001)")) {
            try decode(relative, strict: true)
        }
        #expect(
            try decode(#"{"key": "e", "variants": [{"key": "a", "weight": 0.3335}, {"key": "b", "weight": 0.6660}]}"#, strict: true).key
                == "e")
        #expect(throws: ExperimentError.invalidDefinition("not valid JSON")) { try decode("{") }
    }

    func result(srmAlarm: Bool = false, revenueInterval: [Double], paidInterval: [Double] = [-0.1, 0.1], adjusted: Double = 0.01)
        -> AnalysisResult
    {
        var revenue = MetricResult(value: 1, count: 1000)
        revenue.lift = (revenueInterval[0] + revenueInterval[1]) / 2
        revenue.sequentialCi = revenueInterval
        revenue.pValueAdjusted = adjusted
        var paid = MetricResult(value: 0.1, count: 1000)
        paid.sequentialCi = paidInterval
        return AnalysisResult(
            srm: .init(chiSquare: srmAlarm ? 20 : 1, pValue: srmAlarm ? 0.00001 : 0.3, alarm: srmAlarm),
            variants: [
                VariantResult(
                    key: "control", users: 1000, isControlCheck: false, metrics: ["revenue": MetricResult(value: 1, count: 1000)]),
                VariantResult(key: "b", users: 1000, isControlCheck: false, metrics: ["revenue": revenue, "paid": paid]),
            ])
    }

    @Test("recommendations: SRM first, then harm, then a clear revenue winner, else keep running")
    func recommendations() {
        #expect(Recommendation.make(result(srmAlarm: true, revenueInterval: [0.2, 0.4]), controlKey: "control").summary == "stop: SRM")
        #expect(
            Recommendation.make(result(revenueInterval: [0.2, 0.4], paidInterval: [-0.3, -0.05]), controlKey: "control").summary
                == "stop: harm")
        #expect(Recommendation.make(result(revenueInterval: [-0.4, -0.1]), controlKey: "control").summary == "stop: harm")
        let ship = Recommendation.make(result(revenueInterval: [0.2, 0.4]), controlKey: "control")
        #expect(ship.summary == "shipVariant b" && ship.reason.contains("+30.0%"))
        #expect(Recommendation.make(result(revenueInterval: [0.2, 0.4], adjusted: 0.2), controlKey: "control").summary == "keepRunning")
        #expect(Recommendation.make(result(revenueInterval: [-0.1, 0.4]), controlKey: "control").summary == "keepRunning")
        // A stopped test is not judged: it says it is stopped and what everyone gets.
        let stopped = Recommendation.make(
            result(revenueInterval: [-0.1, 0.4]), controlKey: "control", status: .stopped, winner: "b")
        #expect(stopped.action == .stopped && stopped.variant == "b" && stopped.summary == "stopped: b")
        let rolledBack = Recommendation.make(
            result(revenueInterval: [0.2, 0.4]), controlKey: "control", status: .rolledBack, winner: nil)
        #expect(rolledBack.action == .stopped && rolledBack.variant == "control")
        #expect(
            Recommendation.make(result(revenueInterval: [0.2, 0.4]), controlKey: "control", status: .running, winner: nil).summary
                == "shipVariant b")
        // The lift undefined (the control at 0): the difference's interval decides.
        var noLift = result(revenueInterval: [0.2, 0.4])
        noLift.variants[1].metrics["revenue"]?.lift = nil
        noLift.variants[1].metrics["revenue"]?.sequentialCi = nil
        noLift.variants[1].metrics["revenue"]?.difference = 0.5
        noLift.variants[1].metrics["revenue"]?.sequentialDifferenceCi = [0.1, 0.9]
        let shipped = Recommendation.make(noLift, controlKey: "control")
        #expect(shipped.summary == "shipVariant b" && shipped.reason.contains("+0.5"), "\(shipped.reason)")
    }
}
