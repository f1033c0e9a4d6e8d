import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Every CSV the product writes (an import's problems, over the API and from the CLI; `storekeeper export`) quotes as
/// RFC 4180 says and neutralises what a spreadsheet would run as a formula (issue 61, item 8). Checked by reading
/// the files back with Python's `csv` module, an independent reader.
@Suite("CSV injection")
struct CSVInjectionTests {
    /// Cells an attacker controls (app user ids, reasons that echo input).
    static let hostile = [
        "=HYPERLINK(\"http://evil.example\",\"click\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\tTAB", "\rCR",
        "a,\u{301}b", "\"\u{301}quoted", "line\nbreak", "plain", "x=1", "café, \"q\"",
    ]

    /// What a spreadsheet shows for a hostile cell: the same text, a `'` before one that would be a formula.
    static func shown(_ value: String) -> String {
        ["=", "+", "-", "@", "\t", "\r"].contains(value.unicodeScalars.first ?? " ") ? "'" + value : value
    }

    /// The rows of `csv` as Python's `csv` module reads them.
    static func pythonRows(_ csv: String) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import csv, io, json, sys; print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.buffer.read().decode('utf-8'), newline='')))))",
        ]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(csv.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try JSONDecoder().decode([[String]].self, from: data)
    }

    @Test("a cell: formulas neutralised with a leading ', quoted by scalar; Python reads every one back as one cell")
    func cells() throws {
        #expect(CSVCell.text("plain") == "plain")
        #expect(CSVCell.text("=1+1") == "\"'=1+1\"")
        #expect(CSVCell.text("a,\u{301}b") == "\"a,\u{301}b\"")
        #expect(CSVCell.text("\"\u{301}") == "\"\"\"\u{301}\"")
        let rows = try Self.pythonRows(Self.hostile.map(CSVCell.text).joined(separator: ",") + "\r\n")
        #expect(rows == [Self.hostile.map(Self.shown)])
    }

    @Test("an import's problems file, as the API and the CLI write it")
    func importProblems() throws {
        let problems = Self.hostile.enumerated().map { index, value in
            ImportProblem(line: index + 2, appUserId: value, transactionIds: ["1", value], outcome: "notFound", reason: "no \(value)")
        }
        let rows = try Self.pythonRows(ImportProblemCSV.text(problems))
        #expect(rows.first == ImportProblemCSV.header.split(separator: ",").map(String.init))
        #expect(rows.count == problems.count + 1)
        for (row, problem) in zip(rows.dropFirst(), problems) {
            #expect(
                row == [
                    String(problem.line), Self.shown(problem.appUserId), "1 " + problem.appUserId, "notFound", "no " + problem.appUserId,
                ])
        }
    }

    @Test("storekeeper export's CSV: customers named by an attacker come back as text, one cell each")
    func export() async throws {
        let h = try await Harness.make(.sqlite)
        let ids = Self.hostile.filter { !$0.contains("\n") && !$0.contains("\r") }
        try await h.test { client in
            for (index, id) in ids.enumerated() {
                let purchase = Purchase(
                    transactionId: "\(index + 1)", originalTransactionId: "\(index + 1)", purchase: at(0), expires: at(30), signed: at(0))
                let response = try await client.execute(
                    uri: "/v1/customers/\(DashboardPaths.pathEscaped(id))/transactions", method: .post, headers: headers(h.app.secretKey),
                    body: body(["signedTransaction": try purchase.signed()]))
                #expect(response.status == .ok, "\(id): \(String(buffer: response.body))")
            }
            let directory = try TestRun.scratch("export-hostile")
            _ = try await h.core.export.write(to: directory, format: .csv, range: ExportRange(), now: at(10))
            let rows = try Self.pythonRows(try ExportTests.gunzip(directory.appendingPathComponent("customers.csv.gz")))
            let header = try #require(rows.first)
            let column = try #require(header.firstIndex(of: "app_user_id"))
            #expect(rows.dropFirst().allSatisfy { $0.count == header.count })
            #expect(Set(rows.dropFirst().map { $0[column] }) == Set(ids.map(Self.shown)))
        }
    }
}
