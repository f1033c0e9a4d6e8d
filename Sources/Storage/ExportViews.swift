import Foundation

/// The export views (docs/export.md): what SQL users and `storekeeper export` read, the same on SQLite and PostgreSQL.
/// Their columns are an interface: a change is a new version, with new views beside these (migration 20 creates these
/// as they are written here, so they are never edited).
public enum ExportViews {
    /// The schema version of the views and of `storekeeper export`'s files.
    public static let schemaVersion = 1

    /// A column of a view and the kind of its values.
    public struct Column: Sendable, Hashable {
        public enum Kind: String, Sendable { case text, integer, real }
        public var name: String
        public var kind: Kind
    }

    /// One view: its name, its SELECT, its columns, and those its rows are ordered and paged by (unique together; a
    /// NULL orders as the empty text).
    public struct View: Sendable {
        public var name: String
        public var select: String
        public var key: [String]
        /// The instant column a date range filters on.
        public var instant: String
        /// Key columns that can be NULL (ordered as the empty text).
        public var nullableKey: Set<String>
        /// The columns, in order, with their kinds (read from the SELECT once): every other column is text.
        public let columns: [Column]

        init(name: String, select: String, key: [String], instant: String, nullableKey: Set<String> = []) {
            self.name = name
            self.select = select
            self.key = key
            self.instant = instant
            self.nullableKey = nullableKey
            // The outer FROM begins a line (a subquery's does not).
            let names = select.components(separatedBy: "\nFROM ").first.map(Self.selected) ?? []
            columns = names.map { Column(name: $0, kind: Self.integers.contains($0) ? .integer : $0 == "usd_rate" ? .real : .text) }
        }

        /// The names a SELECT list gives (`x AS name`, `t.name`, `name`), read from its text.
        static func selected(_ list: String) -> [String] {
            var names: [String] = []
            var depth = 0
            var current = ""
            for character in list.dropFirst("SELECT".count + 1) {
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
                if character == ",", depth == 0 {
                    names.append(Self.name(current))
                    current = ""
                } else {
                    current.append(character)
                }
            }
            if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { names.append(Self.name(current)) }
            return names
        }

        static func name(_ item: String) -> String {
            let words = item.split(whereSeparator: \.isWhitespace)
            let last = words.last.map(String.init) ?? ""
            return last.split(separator: ".").last.map(String.init) ?? last
        }

        static let integers: Set<String> = [
            "anonymous", "created_at", "computed_at", "purchase_date", "expires_date", "revocation_date", "price", "signed_date",
            "received_at", "start_at", "end_at", "renewal_number", "family_shared", "refunded_at", "refund_amount", "monthly_price",
            "commission_per_mille", "tax_per_mille", "rate_day", "seq", "effective_at", "recorded_at", "retracted_at",
        ]
    }

    public static let views: [View] = [
        View(
            name: "export_customers",
            select: """
                SELECT c.id AS customer_id, c.app_id,
                    (SELECT u.app_user_id FROM app_users u WHERE u.customer_id = c.id ORDER BY u.created_at, u.app_user_id LIMIT 1) AS app_user_id,
                    c.anonymous, c.created_at, s.environment, s.state, s.computed_at
                FROM customers c LEFT JOIN customer_states s ON s.customer_id = c.id
                """,
            key: ["customer_id", "environment"], instant: "created_at", nullableKey: ["environment"]),
        View(
            name: "export_transactions",
            select: """
                SELECT t.app_id, t.transaction_id, t.version, t.original_transaction_id, o.customer_id, t.environment, t.product_id,
                    t.purchase_date, t.expires_date, t.revocation_date, t.price, t.currency, t.source, t.signed_date, t.received_at
                FROM transactions t LEFT JOIN ownership o ON o.app_id = t.app_id AND o.original_transaction_id = t.original_transaction_id
                """,
            key: ["app_id", "transaction_id", "version"], instant: "received_at"),
        View(
            name: "export_ledger",
            select: """
                SELECT app_id, environment, transaction_id, customer_id, original_transaction_id, product_id, group_id, kind, start_at, end_at,
                    renewal_number, price, currency, storefront, family_shared, refunded_at, refund_amount, monthly_price,
                    commission_per_mille, tax_per_mille, usd_rate, rate_day
                FROM ledger
                """,
            key: ["app_id", "environment", "transaction_id"], instant: "start_at"),
        View(
            name: "export_events",
            select: """
                SELECT app_id, seq, event_id, customer_id, original_transaction_id, environment, type, effective_at, recorded_at,
                    retracted_at, payload
                FROM events
                """,
            key: ["seq"], instant: "recorded_at"),
    ]
}
