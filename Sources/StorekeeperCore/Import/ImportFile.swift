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

/// A file of customers, read: one entry per customer, in the order the file first names them.
public struct ImportFile: Sendable {
    public var format: ImportFormat
    public var customers: [ImportCustomer]
    public var dropped: [ImportDroppedLine]

    /// The largest file read (an import of a million customers' RevenueCat transactions is about this size).
    public static let maxBytes = 512 * 1024 * 1024

    /// Reads `data` in `format`, or in the format its first bytes show (`[` or `{`: Apphud; a header with
    /// `rc_original_app_user_id`: RevenueCat; otherwise plain).
    public static func read(_ data: Data, format: ImportFormat? = nil) throws(CoreError) -> ImportFile {
        guard data.count <= maxBytes else { throw .invalidInput(field: "file", "the file is over \(maxBytes / 1_048_576) MB") }
        let text = String(decoding: data, as: UTF8.self)
        let format = format ?? detect(text)
        var reader = Reader(format: format)
        switch format {
        case .plain: try reader.plain(try CSVTable.parse(text))
        case .revenuecat: try reader.revenueCat(try CSVTable.parse(text))
        case .apphud: try reader.apphud(text)
        }
        guard !reader.order.isEmpty || !reader.dropped.isEmpty else { throw .invalidInput(field: "file", "the file names no customer") }
        return ImportFile(format: format, customers: reader.order.compactMap { reader.customers[$0] }, dropped: reader.dropped)
    }

    static func detect(_ text: String) -> ImportFormat {
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if start.first == "[" || start.first == "{" { return .apphud }
        let header = start.prefix { !$0.isNewline }.lowercased()
        return header.contains("rc_original_app_user_id") ? .revenuecat : .plain
    }

    /// Collects customers by name (or, unnamed, by their first transaction id) as the file's lines come.
    struct Reader {
        let format: ImportFormat
        var customers: [String: ImportCustomer] = [:]
        var order: [String] = []
        var dropped: [ImportDroppedLine] = []

        init(format: ImportFormat) { self.format = format }

        mutating func drop(_ line: Int, _ reason: String) { dropped.append(ImportDroppedLine(line: line, reason: reason)) }

        mutating func add(
            name: String?, alias: String? = nil, transactionId: String, token: String? = nil, environment: String? = nil, line: Int
        ) {
            let key = name.map { "name:" + $0 } ?? "transaction:" + transactionId
            guard var customer = customers[key] else {
                order.append(key)
                customers[key] = ImportCustomer(
                    appUserId: name, aliases: alias.map { [$0] } ?? [], transactionIds: [transactionId], appAccountToken: token,
                    environment: environment, line: line)
                return
            }
            if !customer.transactionIds.contains(transactionId) { customer.transactionIds.append(transactionId) }
            if let alias, !customer.aliases.contains(alias) { customer.aliases.append(alias) }
            if customer.appAccountToken == nil { customer.appAccountToken = token }
            // Purchases in both environments: let each transaction find its own.
            if customer.environment != environment { customer.environment = nil }
            customers[key] = customer
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

        mutating func plain(_ table: CSVTable) throws(CoreError) {
            guard let user = table.column("app_user_id", "appuserid", "user_id"),
                let transaction = table.column(
                    "transaction_id", "original_transaction_id", "store_transaction_id", "original_store_transaction_id")
            else {
                throw .invalidInput(
                    field: "file",
                    "line 1: the header needs app_user_id and transaction_id columns (found: \(table.header.joined(separator: ",")))")
            }
            let token = table.column("app_account_token", "appaccounttoken")
            let environment = table.column("environment")
            for row in table.rows {
                let cell = { (index: Int?) in index.flatMap { $0 < row.cells.count ? row.cells[$0] : nil } ?? "" }
                let id = cell(transaction).trimmingCharacters(in: .whitespaces)
                guard Self.isTransactionId(id) else {
                    drop(row.line, id.isEmpty ? "no transaction id" : "'\(id)' is not an App Store transaction id (digits)")
                    continue
                }
                let tokenCell = cell(token).trimmingCharacters(in: .whitespaces).lowercased()
                if !tokenCell.isEmpty, UUID(uuidString: tokenCell) == nil {
                    drop(row.line, "app_account_token '\(tokenCell)' is not a UUID")
                    continue
                }
                add(
                    name: Self.name(cell(user)), transactionId: id, token: tokenCell.isEmpty ? nil : tokenCell,
                    environment: try Self.environment(cell(environment), line: row.line), line: row.line)
            }
        }

        mutating func revenueCat(_ table: CSVTable) throws(CoreError) {
            guard let original = table.column("rc_original_app_user_id"),
                let transaction = table.column("original_store_transaction_id", "store_transaction_id")
            else {
                throw .invalidInput(
                    field: "file",
                    "line 1: a RevenueCat export needs rc_original_app_user_id and original_store_transaction_id (or store_transaction_id)")
            }
            let fallback = table.column("store_transaction_id")
            let alias = table.column("rc_last_seen_app_user_id_alias")
            let store = table.column("store")
            let sandbox = table.column("is_sandbox")
            for row in table.rows {
                let cell = { (index: Int?) in index.flatMap { $0 < row.cells.count ? row.cells[$0] : nil } ?? "" }
                let storeName = cell(store).trimmingCharacters(in: .whitespaces).lowercased()
                if !storeName.isEmpty, storeName != "app_store" {
                    drop(row.line, "store \(storeName) is not the App Store")
                    continue
                }
                var id = cell(transaction).trimmingCharacters(in: .whitespaces)
                if id.isEmpty { id = cell(fallback).trimmingCharacters(in: .whitespaces) }
                guard Self.isTransactionId(id) else {
                    drop(row.line, id.isEmpty ? "no transaction id" : "'\(id)' is not an App Store transaction id (digits)")
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
                add(
                    name: names.first, alias: names.count > 1 && names[1] != names[0] ? names[1] : nil, transactionId: id,
                    environment: environment, line: row.line)
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

        mutating func apphud(_ text: String) throws(CoreError) {
            let trimmed = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
            var entries: [(line: Int, json: Substring)] = []
            if trimmed.first == "[" {
                entries = [(1, trimmed)]
            } else {
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.allSatisfy(\.isWhitespace) {
                    entries.append((index + 1, line))
                }
            }
            let decoder = JSONDecoder()
            for entry in entries {
                let answers: [ApphudCustomer]
                do {
                    let data = Foundation.Data(entry.json.utf8)
                    if entry.json.first == "[" {
                        answers = try decoder.decode([OneOf].self, from: data).map(\.customer)
                    } else {
                        answers = [try decoder.decode(OneOf.self, from: data).customer]
                    }
                } catch {
                    throw .invalidInput(
                        field: "file", "line \(entry.line): not an Apphud customer answer: \(DecodingErrorDescription.describe(error))")
                }
                for (offset, customer) in answers.enumerated() {
                    let line = entry.json.first == "[" ? offset + 1 : entry.line
                    let purchases = (customer.subscriptions ?? []) + (customer.purchases ?? []) + (customer.nonRenewingPurchases ?? [])
                    if purchases.isEmpty { drop(line, "the customer \(customer.userId ?? "(no user_id)") has no purchases") }
                    for purchase in purchases {
                        let store = purchase.store?.lowercased() ?? "app_store"
                        guard store == "app_store" else {
                            drop(line, "store \(store) is not the App Store")
                            continue
                        }
                        guard let id = purchase.originalTransactionId ?? purchase.transactionId, Self.isTransactionId(id) else {
                            drop(line, "a purchase without an App Store transaction id")
                            continue
                        }
                        add(
                            name: customer.userId.flatMap(Self.name), transactionId: id,
                            environment: try Self.environment(purchase.environment ?? "", line: line), line: line)
                    }
                }
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
    }
}
