import Experiments
import Foundation
import TestSupport
import Testing

@Suite struct ExperimentCLITests {
    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try StorekeeperCLI.run(arguments, near: Bundle.module.bundleURL)
        return (result.status, result.stdout, result.stderr)
    }

    func write(_ text: String) throws -> String {
        let url = try TestRun.scratch("experiment").appendingPathExtension("json")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func assignPrintsTheVariant() throws {
        let path = try write(
            #"""
            {"key": "paywall-2026", "seed": "s1", "phase": 1, "status": "running", "coverage": 1,
             "variants": [{"key": "control"}, {"key": "control_check"}, {"key": "paywall_b", "payload": {"paywall": "b"}}],
             "targeting": {"storefronts": ["USA"]}}
            """#)
        let result = try run(["experiment", "assign", "--definition", path, "--user", "user-42", "--attributes", #"{"storefront": "USA"}"#])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let expected = GrowthBookHashing.hash(seed: "s1", value: "user-42")
        #expect(object["hashValue"] as? Double == expected)
        #expect(object["inExperiment"] as? Bool == true)
        #expect(["control", "control_check", "paywall_b"].contains(object["variant"] as? String ?? ""))

        let outside = try run([
            "experiment", "assign", "--definition", path, "--user", "user-42", "--attributes", #"{"storefront": "DEU"}"#,
        ])
        #expect(outside.stdout.contains("\"inExperiment\":false") && outside.stdout.contains("\"variant\":\"control\""))
        #expect(outside.stdout.contains("\"hashValue\":null"))
    }

    @Test("the server's own answer, with the fields it keeps, is a definition the CLI reads")
    func serverAnswerRoundTrips() throws {
        let path = try write(
            #"""
            {"key": "bold-paywall", "placement": "onboarding", "seed": "bold-paywall", "phase": 0, "status": "running",
             "winner": null, "coverage": 1, "targeting": null, "namespace": null, "startedAt": 1767225600000, "hashVersion": 2,
             "variants": [{"key": "control", "weight": 0.5}, {"key": "treatment", "weight": 0.5, "paywall": "bold"}],
             "createdAt": 1767225600000, "updatedAt": 1767225601000}
            """#)
        let result = try run(["experiment", "assign", "--definition", path, "--user", "user-42"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"inExperiment\":true"))
        // A field that is neither the definition's nor kept by the server is still refused, by name.
        let misspelt = try write(#"{"key": "e", "variants": [{"key": "a"}, {"key": "b"}], "createdAtt": 1}"#)
        let refused = try run(["experiment", "assign", "--definition", misspelt, "--user", "u"])
        #expect(refused.status == 1 && refused.stderr.contains("createdAtt"), "\(refused.stderr)")
    }

    @Test("an error found after the arguments parsed prints the error alone, not the usage")
    func noStrayUsage() throws {
        let result = try run([
            "simulate", "population", "--webhook", "http://127.0.0.1:9/v1/apps/x/notifications/appstore", "--bundle-id", "b",
            "--clock", "sandbox", "--experiment", "/nonexistent/exp.json",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot read /nonexistent/exp.json"), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("USAGE:"), "\(result.stderr)")
    }

    @Test func badDefinitionsAreClearErrors() throws {
        let zero = try write(
            #"{"key": "e", "phase": 1, "status": "running", "coverage": 1, "variants": [{"key": "a", "weight": 0}, {"key": "b", "weight": 0}]}"#
        )
        let result = try run(["experiment", "assign", "--definition", zero, "--user", "u"])
        #expect(result.status == 1 && result.stderr.contains("sum to 0"))
        let broken = try write("{not json")
        #expect(try run(["experiment", "assign", "--definition", broken, "--user", "u"]).status == 1)
        #expect(try run(["experiment", "assign", "--definition", "/nonexistent", "--user", "u"]).status == 2)
        #expect(try run(["experiment", "assign", "--user", "u"]).status == 2)
    }

    @Test func sizeMatchesTheArticle() throws {
        let result = try run(["experiment", "size", "--baseline", "0.02", "--mde", "0.5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"usersPerArm\":3826"))
        #expect(try run(["experiment", "size", "--baseline", "0.9", "--mde", "0.5"]).status == 2)
        #expect(try run(["experiment", "size", "--baseline", "x", "--mde", "0.5"]).status == 2)
    }

    @Test("a decrease is written the natural way: --mde -0.2")
    func sizeOfADecrease() throws {
        let expected = try #require(HypothesisTests.sampleSizePerArm(baseline: 0.1, relativeMDE: -0.2, alpha: 0.05, power: 0.8))
        let result = try run(["experiment", "size", "--baseline", "0.1", "--mde", "-0.2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"usersPerArm\":\(expected)"))
        // A negative value is still checked: -1.5 would make the treatment rate negative.
        #expect(try run(["experiment", "size", "--baseline", "0.1", "--mde", "-1.5"]).status == 2)
    }

    @Test func analyzePrintsJSONAndATable() throws {
        let definition = try write(
            #"{"key": "e", "phase": 1, "status": "running", "coverage": 1, "variants": [{"key": "control"}, {"key": "control_check"}, {"key": "b"}]}"#
        )
        var csv = "user_id,variant,exposed_at,trial,paid,revenue\n"
        for index in 0..<3000 {
            let variant = ["control", "control_check", "b"][index % 3]
            let paid = index % (variant == "b" ? 10 : 20) == 0
            csv += "u\(index),\(variant),1700000000000,\(index % 4 == 0 ? 1 : 0),\(paid ? 1 : 0),\(paid ? "9.99" : "0")\n"
        }
        let data = try write(csv)
        let json = try run(["experiment", "analyze", "--definition", definition, "--data", data, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let srm = try #require(object["srm"] as? [String: Any])
        #expect(srm["pValue"] is Double && srm["alarm"] as? Bool == false)
        let variants = try #require(object["variants"] as? [[String: Any]])
        #expect(variants.map { $0["key"] as? String } == ["control", "control_check", "b"])
        #expect(variants.allSatisfy { $0["users"] as? Int == 1000 })
        let metrics = try #require(variants[2]["metrics"] as? [String: [String: Any]])
        for name in ["trial", "paid", "revenue"] {
            let metric = try #require(metrics[name])
            for key in ["value", "lift", "ci", "pValue", "sequentialCi", "chanceToBeatControl"] {
                #expect(metric[key] != nil, "\(name).\(key)")
            }
        }
        let table = try run(["experiment", "analyze", "--definition", definition, "--data", data])
        #expect(table.status == 0 && table.stdout.contains("SRM: p =") && table.stdout.contains("control_check (A/A)"))

        let bad = try write("user_id,variant,exposed_at,trial,paid,revenue\nu1,control,1,0,0,0\nu2,zzz,1,0,0,0\n")
        let error = try run(["experiment", "analyze", "--definition", definition, "--data", bad])
        #expect(error.status == 1 && error.stderr.hasPrefix("line 3: unknown variant 'zzz'"))
    }
}
