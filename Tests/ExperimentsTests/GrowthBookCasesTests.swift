import Experiments
import Foundation
import Testing

/// Every case GrowthBook publishes for its cross-SDK bucketing (see Fixtures/SOURCES.md), exactly.
@Suite struct GrowthBookCasesTests {
    static func cases(_ name: String) throws -> [[Any]] {
        guard let url = Bundle.module.url(forResource: "Fixtures/growthbook-bucketing", withExtension: "json") else {
            throw CocoaError(.fileNoSuchFile)
        }
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: url)) as? [String: Any]
        return object?[name] as? [[Any]] ?? []
    }

    static func number(_ value: Any) -> Double? { (value as? NSNumber)?.doubleValue }

    @Test func hash() throws {
        let cases = try Self.cases("hash")
        #expect(cases.count == 15)
        for entry in cases {
            let seed = try #require(entry[0] as? String)
            let value = try #require(entry[1] as? String)
            let version = try #require(entry[2] as? Int)
            let result = GrowthBookHashing.hash(seed: seed, value: value, version: version)
            if let expected = Self.number(entry[3]), !(entry[3] is NSNull) {
                #expect(result == expected, "hash(\(seed), \(value), v\(version))")
            } else {
                #expect(result == nil, "hash(\(seed), \(value), v\(version))")
            }
        }
    }

    @Test func bucketRanges() throws {
        let cases = try Self.cases("getBucketRange")
        #expect(cases.count == 13)
        for entry in cases {
            let label = try #require(entry[0] as? String)
            let inputs = try #require(entry[1] as? [Any])
            let count = try #require(inputs[0] as? Int)
            let coverage = try #require(Self.number(inputs[1]))
            let weights = (inputs[2] as? [Any])?.compactMap(Self.number)
            let expected = try #require(entry[2] as? [[Any]]).map { $0.compactMap(Self.number) }
            let ranges = GrowthBookHashing.bucketRanges(count: count, coverage: coverage, weights: weights)
            #expect(ranges.count == expected.count, "\(label)")
            for (range, bounds) in zip(ranges, expected) {
                // GrowthBook's own tests compare after rounding to 6 decimals.
                #expect(
                    abs(range.lowerBound - bounds[0]) < 1e-9 && abs(range.upperBound - bounds[1]) < 1e-9, "\(label): \(range) vs \(bounds)")
            }
        }
    }

    @Test func chooseVariation() throws {
        let cases = try Self.cases("chooseVariation")
        #expect(cases.count == 13)
        for entry in cases {
            let label = try #require(entry[0] as? String)
            let value = try #require(Self.number(entry[1]))
            let ranges = try #require(entry[2] as? [[Any]]).map { pair -> ClosedRange<Double> in
                let bounds = pair.compactMap(Self.number)
                return bounds[0]...bounds[1]
            }
            let expected = try #require(entry[3] as? Int)
            #expect((GrowthBookHashing.chooseVariation(value, ranges: ranges) ?? -1) == expected, "\(label)")
        }
    }

    @Test func namespaces() throws {
        let cases = try Self.cases("inNamespace")
        #expect(cases.count == 16)
        for entry in cases {
            let label = try #require(entry[0] as? String)
            let user = try #require(entry[1] as? String)
            let spec = try #require(entry[2] as? [Any])
            let namespace = Namespace(
                id: try #require(spec[0] as? String), start: try #require(Self.number(spec[1])), end: try #require(Self.number(spec[2])))
            let expected = try #require(entry[3] as? Bool)
            #expect(GrowthBookHashing.inNamespace(userId: user, namespace: namespace) == expected, "\(label)")
        }
    }

    @Test func equalWeights() throws {
        let cases = try Self.cases("getEqualWeights")
        #expect(cases.count == 6)
        for entry in cases {
            let count = try #require(entry[0] as? Int)
            let expected = try #require(entry[1] as? [Any]).compactMap(Self.number)
            let weights = GrowthBookHashing.equalWeights(count)
            #expect(weights.count == expected.count)
            for (weight, value) in zip(weights, expected) {
                #expect(abs(weight - value) < 1e-8, "equalWeights(\(count))")
            }
        }
    }
}
