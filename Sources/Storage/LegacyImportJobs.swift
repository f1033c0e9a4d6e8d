import Foundation
import SQLKit

/// Moves the import jobs of releases before migration 24, which kept their customers and dropped lines as JSON on the
/// job's row, into `import_customers` and `import_dropped` (migration 24's last step; one job in memory at a time).
enum LegacyImportJobs {
    /// A customer as those releases encoded them (the domain's `ImportCustomer` then).
    private struct Customer: Decodable {
        var appUserId: String?
        var aliases: [String]
        var transactionIds: [String]
        var appAccountToken: String?
        var environment: String?
        var line: Int
    }

    private struct Dropped: Decodable {
        var line: Int
        var reason: String
    }

    static func move(_ db: any SQLDatabase) async throws {
        let ids = try await db.raw("SELECT id FROM import_jobs WHERE customers <> '' ORDER BY id").all().map {
            try $0.decode(column: "id", as: String.self)
        }
        for id in ids {
            guard let row = try await db.raw("SELECT customers, dropped FROM import_jobs WHERE id = \(bind: id)").first() else { continue }
            let customers = try JSONDecoder().decode([Customer].self, from: Data(try row.decode(column: "customers", as: String.self).utf8))
            let dropped =
                (try? JSONDecoder().decode([Dropped].self, from: Data(try row.decode(column: "dropped", as: String.self).utf8))) ?? []
            for (item, customer) in customers.enumerated() {
                // The key reading groups lines by: what the release before grouped them by.
                let key = customer.appUserId.map { "name:" + $0 } ?? "transaction:" + (customer.transactionIds.first ?? "\(item)")
                try await db.raw(
                    """
                    INSERT INTO import_customers (job_id, item, key, app_user_id, aliases, transaction_ids, app_account_token,
                        environment, line)
                    VALUES (\(bind: id), \(bind: item), \(bind: key), \(bind: customer.appUserId),
                        \(bind: StorageSession.joinedAliases(customer.aliases)), \(bind: customer.transactionIds.joined(separator: " ")),
                        \(bind: customer.appAccountToken), \(bind: customer.environment), \(bind: customer.line))
                    ON CONFLICT DO NOTHING
                    """
                ).run()
            }
            for (seq, line) in dropped.enumerated() {
                try await db.raw(
                    "INSERT INTO import_dropped (job_id, seq, line, reason) VALUES (\(bind: id), \(bind: seq), \(bind: line.line), \(bind: line.reason))"
                ).run()
            }
            try await db.raw(
                "UPDATE import_jobs SET customers = '', dropped = '', dropped_count = \(bind: dropped.count) WHERE id = \(bind: id)"
            ).run()
        }
    }
}
