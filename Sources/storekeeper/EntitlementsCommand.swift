import AppStore
import ArgumentParser
import Entitlements
import Foundation

struct EntitlementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "Compute a customer's state and subscription events from a catalog and facts.",
        discussion: """
            The catalog is {"products": [{"id", "type", "group", "period", "duration", "entitlements", "level"}]}. \
            The facts file holds one JSON object a line: {"transaction": {…}}, {"renewalInfo": {…}} or \
            {"notification": {…}}, with Apple's field names. A malformed line exits 1 with its line number.
            """
    )

    @Option(help: "The product catalog (JSON).")
    var catalog: String

    @Option(help: "The customer's facts (JSON Lines).")
    var facts: String

    @Option(parsing: .unconditional, help: "The instant to evaluate at, in milliseconds since the Unix epoch (default: now).")
    var at: Int64?

    @Option(help: "Only facts of this environment: Production, Sandbox, Xcode or LocalTesting.")
    var environment: String?

    func run() throws {
        guard let catalogData = FileManager.default.contents(atPath: catalog) else {
            throw UsageError(message: "cannot read the catalog '\(catalog)'")
        }
        guard let factsData = FileManager.default.contents(atPath: facts) else {
            throw UsageError(message: "cannot read the facts '\(facts)'")
        }
        if let environment, Environment.known(spelled: environment) == nil {
            throw UsageError(message: "--environment must be production, sandbox, xcode or localtesting (any case)")
        }
        let parsedCatalog: Catalog
        do {
            parsedCatalog = try CatalogFile.parse(catalogData, path: catalog)
        } catch {
            FileHandle.standardError.write(Data("\(error.message)\n".utf8))
            throw ExitCode(1)
        }
        let parsedFacts: [Fact]
        do {
            parsedFacts = try FactsFile.parse(factsData)
        } catch {
            FileHandle.standardError.write(Data("\(facts):\(error.line): \(error.message)\n".utf8))
            throw ExitCode(1)
        }
        let now = at.map(Timestamp.init(millisecondsSince1970:)) ?? Timestamp(Date())
        let evaluation = EntitlementEngine.evaluate(
            catalog: parsedCatalog, facts: parsedFacts, now: now, environment: environment.flatMap(Environment.known(spelled:)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        FileHandle.standardOutput.write(try encoder.encode(evaluation) + Data("\n".utf8))
    }
}

/// A facts file that cannot be read, and where.
struct FactsFileError: Error {
    var line: Int
    var message: String
}

/// JSON Lines of facts. Blank lines are skipped; every other line must be one fact the engine can use.
enum FactsFile {
    static func parse(_ data: Data) throws(FactsFileError) -> [Fact] {
        var facts: [Fact] = []
        let decoder = JSONDecoder()
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) { continue }
            let fact: Fact
            do {
                fact = try decoder.decode(Fact.self, from: Data(line))
            } catch {
                throw FactsFileError(line: lineNumber, message: DecodingErrorDescription.describe(error))
            }
            switch fact {
            case .transaction(let transaction):
                for (name, present) in [
                    ("transactionId", transaction.transactionId != nil), ("productId", transaction.productId != nil),
                    ("purchaseDate", transaction.purchaseDate != nil),
                ] where !present {
                    throw FactsFileError(line: lineNumber, message: "the transaction has no \(name)")
                }
            case .renewalInfo(let renewal):
                if renewal.originalTransactionId == nil {
                    throw FactsFileError(line: lineNumber, message: "the renewal info has no originalTransactionId")
                }
            case .notification:
                break
            }
            facts.append(fact)
        }
        return facts
    }
}
