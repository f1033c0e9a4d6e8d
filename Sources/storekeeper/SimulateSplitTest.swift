import AppStore
import AppStoreSimulator
import ArgumentParser
import AsyncHTTPClient
import Experiments
import Foundation
import NIOCore

/// `simulate population --experiment exp.json --effect treatment=+50%`: every simulated customer asks the server for
/// the experiment's placement, logs its exposure and subscribes with its arm's chance; the run prints the ground truth
/// per arm and, with a secret key, compares the server's results with it.
struct SplitTestOptions: ParsableArguments {
    @Option(help: "A split test running on the server: its definition (JSON; key and placement are read).") var experiment: String?
    @Option(help: ArgumentHelp("An arm's conversion relative to the control's (repeatable).", valueName: "variant=+50%")) var effect:
        [String] = []
    @Option(help: "The control's chance that an arriving customer subscribes.") var conversion: Double = 0.2
    @Option(
        name: .customLong("exposure-loss"),
        help: ArgumentHelp("A broken app: the share of an arm's exposures it fails to log (repeatable).", valueName: "variant=0.077"))
    var exposureLoss: [String] = []
    @Option(name: .customLong("app-key"), help: "The key the simulated app uses (pk_…; default: --verify-with).") var appKey: String?

    func experiment(seed: UInt64) throws -> PopulationExperiment? {
        guard let path = experiment else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        let definition: ExperimentDefinition
        do { definition = try ExperimentDefinition.decode(data) } catch { throw ValidationError("\(path): \(error)") }
        guard let placement = definition.placement else { throw ValidationError("\(path): the definition names no placement") }
        guard (0...1).contains(conversion) else { throw ValidationError("--conversion is a chance from 0 to 1") }
        var effects: [String: Double] = [:]
        for text in effect {
            let parsed: (variant: String, multiplier: Double)
            do { parsed = try PopulationExperiment.parseEffect(text) } catch { throw ValidationError("--effect: \(error.message)") }
            guard definition.variants.contains(where: { $0.key == parsed.variant }) else {
                throw ValidationError("--effect: '\(parsed.variant)' is not a variant of \(definition.key)")
            }
            effects[parsed.variant] = parsed.multiplier
        }
        var losses: [String: Double] = [:]
        for text in exposureLoss {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let share = Double(parts[1]), (0...1).contains(share) else {
                throw ValidationError("--exposure-loss is variant=share, a share from 0 to 1: '\(text)'")
            }
            losses[parts[0]] = share
        }
        return PopulationExperiment(
            key: definition.key, placement: placement, baseConversion: conversion, effects: effects, exposureLoss: losses, seed: seed)
    }

    func run(_ experiment: PopulationExperiment, scenario: Scenario, session: SimulationSession) async throws -> Int32 {
        guard let key = appKey ?? session.options.verifyWith else {
            throw ValidationError("--experiment needs the app's key: --app-key pk_… (or --verify-with)")
        }
        let asker = HTTPPlacementAsker(
            base: session.options.serverBase, key: key, experiment: experiment, environment: session.app.environment.rawValue)
        // Two seconds of the sandbox clock between an arrival and its purchases: the exposure is stamped first.
        let delayed = PopulationExperiment.delayingPurchases(scenario, by: 0.2)
        let truth = try await experiment.play(delayed, player: session.player, asker: asker, end: SimulationSession.wallClock)
        try await session.finish()
        print("ground truth per arm: \(truth)")
        guard let secret = session.options.verifyWith, secret.hasPrefix("sk_") else { return 0 }
        let parts = URL(string: session.options.webhook)?.pathComponents ?? []
        guard let appsIndex = parts.firstIndex(of: "apps"), appsIndex + 1 < parts.count else {
            print("results: the webhook URL names no app, not compared")
            return 1
        }
        let path =
            "/v1/apps/\(parts[appsIndex + 1])/experiments/\(experiment.key)/results?environment=\(session.app.environment.rawValue)&window=unbounded"
        let results = try JSONDecoder().decode(ServerResults.self, from: try await session.get(path, key: secret))
        var mismatches = 0
        for arm in results.arms {
            let expected = truth.arms[arm.key] ?? ExperimentTruth.Arm()
            if arm.exposed != expected.exposed || arm.trials != expected.trials || arm.paid != expected.paid {
                mismatches += 1
                print(
                    "results mismatch in \(arm.key): server exposed \(arm.exposed), trials \(arm.trials), paid \(arm.paid); simulator exposed \(expected.exposed), trials \(expected.trials), paid \(expected.paid)"
                )
            }
        }
        print("server's recommendation: \(results.recommendation.summary) (\(results.recommendation.reason)); \(mismatches) arms differ")
        return mismatches == 0 ? 0 : 1
    }

    struct ServerResults: Decodable {
        struct Arm: Decodable {
            var key: String
            var exposed: Int
            var trials: Int
            var paid: Int
        }
        var arms: [Arm]
        var recommendation: Recommendation
    }
}

/// The simulated app's requests, over HTTP to a live server (which stamps them with its own clock).
struct HTTPPlacementAsker: PlacementAsker {
    let base: String
    let key: String
    let experiment: PopulationExperiment
    let environment: String

    struct Answer: Decodable {
        struct Part: Decodable {
            var variant: String
            var phase: Int
        }
        var experiment: Part?
    }

    func placement(appUserId: String, at instant: Int64) async throws -> (variant: String, phase: Int)? {
        let (status, body) = try await SimulationSession.send(
            "GET", base + TruthCheck.customerPath(appUserId) + "/placements/\(experiment.placement)?environment=\(environment)", key: key)
        guard status == 200 else { throw ValidationError("placement: HTTP \(status): \(String(decoding: body, as: UTF8.self))") }
        return try JSONDecoder().decode(Answer.self, from: body).experiment.map { ($0.variant, $0.phase) }
    }

    func expose(appUserId: String, variant: String, phase: Int, at instant: Int64) async throws {
        let json = try JSONEncoder().encode(
            ExposureBody(experiment: experiment.key, variant: variant, phase: phase, placement: experiment.placement))
        let (status, answer) = try await SimulationSession.send(
            "POST", base + TruthCheck.customerPath(appUserId) + "/exposures?environment=\(environment)", key: key, json: json)
        guard status == 200 || status == 201 else {
            throw ValidationError("exposure: HTTP \(status): \(String(decoding: answer, as: UTF8.self))")
        }
    }

    struct ExposureBody: Encodable {
        var experiment: String
        var variant: String
        var phase: Int
        var placement: String
    }
}
