import AppStore
import Foundation

/// One customer to import: who the app knows them as, and the ids Apple knows their purchases by.
public struct ImportCustomer: Codable, Sendable, Hashable {
    /// The app user id to name the customer by; nil for a customer the file does not name (the server names them as
    /// it names a notification's: by the purchase's appAccountToken, or `$anonymous:<originalTransactionId>`).
    public var appUserId: String?
    /// Other app user ids of the same customer (RevenueCat's original app user id beside its last seen alias).
    public var aliases: [String]
    /// Any transaction ids of theirs (original or not): each leads Apple to the customer's whole history.
    public var transactionIds: [String]
    /// The appAccountToken the app gave their purchases, when the file knows it: later notifications carrying it find
    /// this customer.
    public var appAccountToken: String?
    /// `Production` or `Sandbox` when the file says; nil tries the app's environments, production first.
    public var environment: String?
    /// The first line of the file naming them.
    public var line: Int

    public init(
        appUserId: String?, aliases: [String] = [], transactionIds: [String], appAccountToken: String? = nil, environment: String? = nil,
        line: Int
    ) {
        self.appUserId = appUserId
        self.aliases = aliases
        self.transactionIds = transactionIds
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.line = line
    }
}

/// One purchase a line of the file names, and whose it is: lines are grouped into customers by `key`.
public struct ImportRow: Sendable, Hashable {
    public var appUserId: String?
    public var alias: String?
    public var transactionId: String
    public var appAccountToken: String?
    public var environment: String?
    public var line: Int

    /// What lines are grouped by: the app user id, or for an unnamed customer the transaction id (each purchase of
    /// theirs its own customer, named later as a notification would name it).
    public var key: String { appUserId.map { "name:" + $0 } ?? "transaction:" + transactionId }
}

extension ImportCustomer {
    /// The customer a first line names.
    public init(_ row: ImportRow) {
        self.init(
            appUserId: row.appUserId, aliases: row.alias.map { [$0] } ?? [], transactionIds: [row.transactionId],
            appAccountToken: row.appAccountToken, environment: row.environment, line: row.line)
    }

    /// Folds in another line naming the same customer.
    public mutating func fold(_ row: ImportRow) {
        if !transactionIds.contains(row.transactionId) { transactionIds.append(row.transactionId) }
        if let alias = row.alias, !aliases.contains(alias) { aliases.append(alias) }
        if appAccountToken == nil { appAccountToken = row.appAccountToken }
        // Purchases in both environments: let each transaction find its own.
        if environment != row.environment { environment = nil }
    }
}

/// A line of the file that names nothing to import, and why.
public struct ImportDroppedLine: Codable, Sendable, Hashable {
    public var line: Int
    public var reason: String
}

/// The formats `storekeeper import` reads.
public enum ImportFormat: String, Codable, Sendable, CaseIterable {
    /// CSV with `app_user_id` and `transaction_id` columns (also `original_transaction_id`, `store_transaction_id`),
    /// optionally `app_account_token` and `environment`. Header names are compared loosely (`App User ID`).
    case plain
    /// RevenueCat's Scheduled Data Export (the transactions feed, versions 3 to 7): `rc_original_app_user_id`,
    /// `rc_last_seen_app_user_id_alias`, `store`, `is_sandbox`, `store_transaction_id`, `original_store_transaction_id`.
    case revenuecat
    /// Apphud's Customers API answers (`GET /v1/customers`), one per line or as one JSON array: `user_id`, and each
    /// App Store subscription's `original_transaction_id` and `environment`.
    case apphud
}

/// A file of customers read whole, in memory: one entry per customer, in the order the file first names them. For
/// small files and tests; the server and `storekeeper import` read as the bytes come (`ImportFileReader`), grouping
/// customers in the database.
public struct ImportFile: Sendable {
    public var format: ImportFormat
    public var customers: [ImportCustomer]
    public var dropped: [ImportDroppedLine]

    /// Reads `data` in `format`, or in the format its first bytes show.
    public static func read(_ data: Data, format: ImportFormat? = nil) throws(CoreError) -> ImportFile {
        let format = format ?? ImportFormat.detect(Array(data.prefix(ImportFormat.headBytes)))
        var reader = ImportFileReader(format: format)
        var customers: [String: ImportCustomer] = [:]
        var order: [String] = []
        var dropped: [ImportDroppedLine] = []
        func take(_ read: ImportFileReader.Read) {
            dropped += read.dropped
            for row in read.rows {
                if customers[row.key]?.fold(row) == nil {
                    order.append(row.key)
                    customers[row.key] = ImportCustomer(row)
                }
            }
        }
        take(try reader.feed(data))
        take(try reader.finish())
        guard !order.isEmpty || !dropped.isEmpty else { throw .invalidInput(field: "file", "the file names no customer") }
        return ImportFile(format: format, customers: order.compactMap { customers[$0] }, dropped: dropped)
    }
}

extension ImportFormat {
    /// How much of a file's start tells its format (and holds a CSV header).
    static let headBytes = 64 * 1024

    /// The format a file's first bytes show: `[` or `{`: Apphud; a header with `rc_original_app_user_id`: RevenueCat;
    /// otherwise plain.
    public static func detect(_ head: [UInt8]) -> ImportFormat {
        let text = String(decoding: head, as: UTF8.self)
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if start.first == "[" || start.first == "{" { return .apphud }
        let header = start.prefix { !$0.isNewline }.lowercased()
        return header.contains("rc_original_app_user_id") ? .revenuecat : .plain
    }
}

/// Reads a file of customers as its bytes come, in bounded memory: one row (or one Apphud answer) at a time, each
/// turned into the purchases it names (`ImportRow`) or a line left out with its reason. Grouping rows into customers
/// is the caller's: in memory for a small file (`ImportFile`), in the database for the server's imports.
public struct ImportFileReader: Sendable {
    public let format: ImportFormat
    private var csv = CSVRowReader()
    private var header: Columns?
    private var json = JSONEntryReader()

    /// What some bytes of the file yielded.
    public struct Read: Sendable {
        public var rows: [ImportRow] = []
        public var dropped: [ImportDroppedLine] = []
    }

    public init(format: ImportFormat) { self.format = format }

    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(CoreError) -> Read {
        switch format {
        case .apphud: return try apphud(try json.feed(bytes))
        case .plain, .revenuecat: return try rows(try csv.feed(bytes))
        }
    }

    public mutating func finish() throws(CoreError) -> Read {
        switch format {
        case .apphud: return try apphud(try json.finish())
        case .plain, .revenuecat:
            let read = try rows(try csv.finish())
            guard header != nil else { throw .invalidInput(field: "file", "the file is empty") }
            return read
        }
    }

    /// The columns of a CSV format, found in its header.
    enum Columns: Sendable {
        case plain(user: Int, transaction: Int, token: Int?, environment: Int?)
        case revenueCat(original: Int, transaction: Int, fallback: Int?, alias: Int?, store: Int?, sandbox: Int?)
    }

    private mutating func rows(_ rows: [CSVRowReader.Row]) throws(CoreError) -> Read {
        var read = Read()
        for row in rows {
            guard let columns = header else {
                header = try Self.columns(CSVHeader(row.cells), format: format)
                continue
            }
            let cell = { (index: Int?) in index.flatMap { $0 < row.cells.count ? row.cells[$0] : nil } ?? "" }
            switch columns {
            case .plain(let user, let transaction, let token, let environment):
                let id = cell(transaction).trimmingCharacters(in: .whitespaces)
                guard Self.isTransactionId(id) else {
                    read.drop(row.line, id.isEmpty ? "no transaction id" : "'\(id)' is not an App Store transaction id (digits)")
                    continue
                }
                let tokenCell = cell(token).trimmingCharacters(in: .whitespaces).lowercased()
                if !tokenCell.isEmpty, UUID(uuidString: tokenCell) == nil {
                    read.drop(row.line, "app_account_token '\(tokenCell)' is not a UUID")
                    continue
                }
                read.rows.append(
                    ImportRow(
                        appUserId: Self.name(cell(user)), alias: nil, transactionId: id,
                        appAccountToken: tokenCell.isEmpty ? nil : tokenCell,
                        environment: try Self.environment(cell(environment), line: row.line), line: row.line))
            case .revenueCat(let original, let transaction, let fallback, let alias, let store, let sandbox):
                let storeName = cell(store).trimmingCharacters(in: .whitespaces).lowercased()
                if !storeName.isEmpty, storeName != "app_store" {
                    read.drop(row.line, "store \(storeName) is not the App Store")
                    continue
                }
                var id = cell(transaction).trimmingCharacters(in: .whitespaces)
                if id.isEmpty { id = cell(fallback).trimmingCharacters(in: .whitespaces) }
                guard Self.isTransactionId(id) else {
                    read.drop(row.line, id.isEmpty ? "no transaction id" : "'\(id)' is not an App Store transaction id (digits)")
                    continue
                }
                // RevenueCat's last seen alias is the id the app used last; its original app user id another name.
                let names = [Self.name(cell(alias)), Self.name(cell(original))].compactMap { $0 }
                let environment: String?
                switch cell(sandbox).trimmingCharacters(in: .whitespaces).lowercased() {
                case "true", "t", "1": environment = Environment.sandbox.rawValue
                case "false", "f", "0": environment = Environment.production.rawValue
                default: environment = nil
                }
                read.rows.append(
                    ImportRow(
                        appUserId: names.first, alias: names.count > 1 && names[1] != names[0] ? names[1] : nil, transactionId: id,
                        appAccountToken: nil, environment: environment, line: row.line))
            }
        }
        return read
    }

    static func columns(_ table: CSVHeader, format: ImportFormat) throws(CoreError) -> Columns {
        if format == .revenuecat {
            guard let original = table.column("rc_original_app_user_id"),
                let transaction = table.column("original_store_transaction_id", "store_transaction_id")
            else {
                throw .invalidInput(
                    field: "file",
                    "line 1: a RevenueCat export needs rc_original_app_user_id and original_store_transaction_id (or store_transaction_id)")
            }
            return .revenueCat(
                original: original, transaction: transaction, fallback: table.column("store_transaction_id"),
                alias: table.column("rc_last_seen_app_user_id_alias"), store: table.column("store"), sandbox: table.column("is_sandbox"))
        }
        guard let user = table.column("app_user_id", "appuserid", "user_id"),
            let transaction = table.column(
                "transaction_id", "original_transaction_id", "store_transaction_id", "original_store_transaction_id")
        else {
            throw .invalidInput(
                field: "file",
                "line 1: the header needs app_user_id and transaction_id columns (found: \(table.names.joined(separator: ",")))")
        }
        return .plain(
            user: user, transaction: transaction, token: table.column("app_account_token", "appaccounttoken"),
            environment: table.column("environment"))
    }

    /// Checks a file's start before it is stored: a CSV header with the format's columns (when the start holds the
    /// whole header line), or an Apphud file that starts as JSON.
    public static func checkHead(_ head: [UInt8], format: ImportFormat) throws(CoreError) {
        guard format != .apphud else { return }
        guard head.contains(UInt8(ascii: "\n")) else { return }
        var reader = CSVRowReader()
        if let first = try reader.feed(head).first { _ = try columns(CSVHeader(first.cells), format: format) }
    }

    /// An app user id the import can name a customer by: nil for an empty cell and for another system's anonymous
    /// ids (`$RCAnonymousID:…`, the server's own `$anonymous:…`), whose customers are named as notifications would.
    static func name(_ cell: String) -> String? {
        let id = cell.trimmingCharacters(in: .whitespaces)
        if id.isEmpty || id.hasPrefix("$RCAnonymousID:") || id.hasPrefix(AppUserIds.anonymousPrefix) { return nil }
        return id
    }

    static func isTransactionId(_ id: String) -> Bool { !id.isEmpty && id.count <= 64 && id.allSatisfy { $0.isASCII && $0.isNumber } }

    static func environment(_ cell: String, line: Int) throws(CoreError) -> String? {
        switch cell.trimmingCharacters(in: .whitespaces).lowercased() {
        case "": return nil
        case "production", "prod": return Environment.production.rawValue
        case "sandbox": return Environment.sandbox.rawValue
        default: throw .invalidInput(field: "file", "line \(line): environment '\(cell)' is not Production or Sandbox")
        }
    }

    /// Apphud's customer as its Customers API answers (`data.results`), or that object alone.
    struct ApphudAnswer: Decodable {
        struct Data: Decodable { var results: ApphudCustomer }
        var data: Data?
    }

    struct ApphudCustomer: Decodable {
        struct Purchase: Decodable {
            var originalTransactionId: String?
            var transactionId: String?
            var environment: String?
            var store: String?

            enum CodingKeys: String, CodingKey {
                case originalTransactionId = "original_transaction_id"
                case transactionId = "transaction_id"
                case environment, store
            }
        }
        var userId: String?
        var subscriptions: [Purchase]?
        var purchases: [Purchase]?
        var nonRenewingPurchases: [Purchase]?

        enum CodingKeys: String, CodingKey {
            case userId = "user_id"
            case subscriptions, purchases
            case nonRenewingPurchases = "non_renewing_purchases"
        }
    }

    /// A Customers API answer, or its `results` object alone.
    struct OneOf: Decodable {
        var customer: ApphudCustomer

        init(from decoder: any Decoder) throws {
            let answer = try ApphudAnswer(from: decoder)
            customer = try answer.data?.results ?? ApphudCustomer(from: decoder)
        }
    }

    private func apphud(_ entries: [JSONEntryReader.Entry]) throws(CoreError) -> Read {
        var read = Read()
        let decoder = JSONDecoder()
        for entry in entries {
            let answers: [ApphudCustomer]
            do {
                if entry.bytes.first == UInt8(ascii: "[") {
                    answers = try decoder.decode([OneOf].self, from: Data(entry.bytes)).map(\.customer)
                } else {
                    answers = [try decoder.decode(OneOf.self, from: Data(entry.bytes)).customer]
                }
            } catch {
                throw .invalidInput(
                    field: "file", "line \(entry.line): not an Apphud customer answer: \(DecodingErrorDescription.describe(error))")
            }
            for customer in answers {
                let line = entry.line
                let purchases = (customer.subscriptions ?? []) + (customer.purchases ?? []) + (customer.nonRenewingPurchases ?? [])
                if purchases.isEmpty { read.drop(line, "the customer \(customer.userId ?? "(no user_id)") has no purchases") }
                for purchase in purchases {
                    let store = purchase.store?.lowercased() ?? "app_store"
                    guard store == "app_store" else {
                        read.drop(line, "store \(store) is not the App Store")
                        continue
                    }
                    guard let id = purchase.originalTransactionId ?? purchase.transactionId, Self.isTransactionId(id) else {
                        read.drop(line, "a purchase without an App Store transaction id")
                        continue
                    }
                    read.rows.append(
                        ImportRow(
                            appUserId: customer.userId.flatMap(Self.name), alias: nil, transactionId: id, appAccountToken: nil,
                            environment: try Self.environment(purchase.environment ?? "", line: line), line: line))
                }
            }
        }
        return read
    }
}

extension ImportFileReader.Read {
    mutating func drop(_ line: Int, _ reason: String) { dropped.append(ImportDroppedLine(line: line, reason: reason)) }
}
