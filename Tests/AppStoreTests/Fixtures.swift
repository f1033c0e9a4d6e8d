import Foundation

/// Reads the files under `Fixtures/` (copied into the test bundle; see `Fixtures/SOURCES.md`).
enum Fixtures {
    struct Missing: Error, CustomStringConvertible {
        var name: String
        var description: String { "fixture \(name) is missing from the test bundle" }
    }

    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil),
            let data = try? Data(contentsOf: url)
        else { throw Missing(name: name) }
        return data
    }

    static func string(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func bytes(_ name: String) throws -> [UInt8] { Array(try data(name)) }
}
