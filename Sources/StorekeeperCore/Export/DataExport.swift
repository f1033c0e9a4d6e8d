import CompressNIO
import Foundation
import NIOCore
import Storage

/// `storekeeper export`: the export views (docs/export.md) written as gzip files, CSV or JSON lines, with a manifest
/// that names the schema version, the range and each file's rows.
public struct DataExport: Sendable {
    let database: StorageDatabase

    public enum Format: String, Sendable, Codable, CaseIterable {
        case csv, jsonl
    }

    /// What an export wrote.
    public struct Manifest: Codable, Sendable, Hashable {
        public struct File: Codable, Sendable, Hashable {
            public var name: String
            public var view: String
            public var rows: Int
        }
        public var schemaVersion: Int
        public var format: Format
        public var exportedAt: Int64
        public var appId: String?
        /// The range of each view's instant column, [from, until), epoch milliseconds; nil: unbounded.
        public var from: Int64?
        public var until: Int64?
        public var files: [File]
    }

    /// Rows read per query; each page is one gzip member of its file (a file of several members is one gzip stream to
    /// every reader of the format), so an export of any size needs the memory of one page.
    static let pageSize = 5_000

    /// Writes each export view to `directory` as `<view>.csv.gz` or `<view>.jsonl.gz`, then `manifest.json`.
    public func write(to directory: URL, format: Format, range: ExportRange, now: Int64) async throws -> Manifest {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var manifest = Manifest(
            schemaVersion: ExportViews.schemaVersion, format: format, exportedAt: now, appId: range.appId, from: range.from,
            until: range.until, files: [])
        for view in ExportViews.views {
            let name = view.name.replacingOccurrences(of: "export_", with: "") + "." + format.rawValue + ".gz"
            let url = directory.appendingPathComponent(name)
            // Written under a temporary name, then moved: a reader never sees half a file.
            let partial = directory.appendingPathComponent("." + name + ".partial")
            guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                throw CoreError.invalidInput(field: "to", "cannot write in \(directory.path)")
            }
            let handle = try FileHandle(forWritingTo: partial)
            var rows = 0
            do {
                let columns = view.columns
                if format == .csv { try Self.append(columns.map(\.name).joined(separator: ",") + "\n", to: handle) }
                var after: [ExportValue]?
                while true {
                    let page = try await database.reading { [after] in
                        try await $0.exportRows(view, range: range, after: after, limit: Self.pageSize)
                    }
                    guard let last = page.last else { break }
                    var text = ""
                    for row in page { text += format == .csv ? Self.csvLine(row) : Self.jsonLine(row, columns: columns) }
                    try Self.append(text, to: handle)
                    rows += page.count
                    after = view.key.compactMap { key in columns.firstIndex { $0.name == key }.map { last[$0] } }
                    if page.count < Self.pageSize { break }
                }
                // An empty JSON-lines file is still one (empty) gzip member: a file of no bytes is no gzip file.
                if format == .jsonl, rows == 0 { try Self.append("", to: handle) }
                try handle.close()
                if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
                try FileManager.default.moveItem(at: partial, to: url)
            } catch {
                try? handle.close()
                try? FileManager.default.removeItem(at: partial)
                throw error
            }
            manifest.files.append(Manifest.File(name: name, view: view.name, rows: rows))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: directory.appendingPathComponent("manifest.json"), options: .atomic)
        return manifest
    }

    /// `text` as one gzip member at the end of the file.
    static func append(_ text: String, to handle: FileHandle) throws {
        var buffer = ByteBuffer(string: text)
        let compressed = try buffer.compress(with: .gzip())
        try handle.write(contentsOf: Data(compressed.readableBytesView))
    }

    static func csvLine(_ row: [ExportValue]) -> String {
        row.map { value in
            switch value {
            case .null: ""
            case .integer(let v): String(v)
            case .real(let v): String(v)
            case .text(let v): CSVCell.text(v)
            }
        }.joined(separator: ",") + "\n"
    }

    static func jsonLine(_ row: [ExportValue], columns: [ExportViews.Column]) -> String {
        var object: [String: Any] = [:]
        for (column, value) in zip(columns, row) {
            switch value {
            case .null: object[column.name] = NSNull()
            case .integer(let v): object[column.name] = v
            case .real(let v): object[column.name] = v
            case .text(let v): object[column.name] = v
            }
        }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
