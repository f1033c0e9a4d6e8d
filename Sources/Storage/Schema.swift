import SQLKit

/// Storekeeper's tables. Instants are BIGINT epoch milliseconds; prices milliunits beside their currency.
///
/// Facts (`transactions`, `renewal_infos`, `notifications`) are append-only and idempotent: a transaction is keyed by
/// its `transaction_id` and the digest of the version (a refund is a new version of the same transaction), a renewal
/// info by its original transaction and digest, a notification by its `notification_uuid`. Each keeps the raw signed
/// data it came in. Everything else (`customer_states`, `events`) is derived from the facts and can be rebuilt.
public enum Schema {
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "apps, keys, customers, facts, events") { db in
            try await db.create(table: "apps")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("bundle_id", type: .text, .notNull)
                .column("config", type: .text, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .run()
            try await db.create(table: "api_keys")
                .column("key_id", type: .text, .primaryKey(autoIncrement: false))
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("kind", type: .text, .notNull)
                .column("secret_hash", type: .text, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .column("revoked_at", type: .bigint)
                .run()
            try await db.create(index: "api_keys_app").on("api_keys").column("app_id").run()

            try await db.create(table: "customers")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("anonymous", type: .bigint, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .run()
            // Every app user id (and alias) names one customer.
            try await db.create(table: "app_users")
                .column("app_id", type: .text, .notNull)
                .column("app_user_id", type: .text, .notNull)
                .column("customer_id", type: .text, .notNull, .references("customers", "id"))
                .column("created_at", type: .bigint, .notNull)
                .primaryKey("app_id", "app_user_id")
                .run()
            try await db.create(index: "app_users_customer").on("app_users").column("customer_id").run()
            // Which customer owns an original transaction: the link that facts reach customers through.
            try await db.create(table: "ownership")
                .column("app_id", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("customer_id", type: .text, .notNull, .references("customers", "id"))
                .column("linked_at", type: .bigint, .notNull)
                .primaryKey("app_id", "original_transaction_id")
                .run()
            try await db.create(index: "ownership_customer").on("ownership").column("customer_id").run()

            try await db.create(table: "transactions")
                .column("app_id", type: .text, .notNull)
                .column("transaction_id", type: .text, .notNull)
                .column("version", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("product_id", type: .text, .notNull)
                .column("signed_date", type: .bigint, .notNull)
                .column("purchase_date", type: .bigint)
                .column("expires_date", type: .bigint)
                .column("revocation_date", type: .bigint)
                .column("price", type: .bigint)
                .column("currency", type: .text)
                .column("source", type: .text, .notNull)
                .column("payload", type: .text, .notNull)
                .column("signed", type: .text)
                .column("received_at", type: .bigint, .notNull)
                .primaryKey("app_id", "transaction_id", "version")
                .run()
            try await db.create(index: "transactions_original").on("transactions")
                .column("app_id").column("original_transaction_id").run()
            try await db.create(table: "renewal_infos")
                .column("app_id", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("version", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("signed_date", type: .bigint, .notNull)
                .column("payload", type: .text, .notNull)
                .column("signed", type: .text)
                .column("received_at", type: .bigint, .notNull)
                .primaryKey("app_id", "original_transaction_id", "version")
                .run()
            try await db.create(table: "notifications")
                .column("app_id", type: .text, .notNull)
                .column("notification_uuid", type: .text, .notNull)
                .column("notification_type", type: .text, .notNull)
                .column("subtype", type: .text)
                .column("environment", type: .text, .notNull)
                .column("signed_date", type: .bigint, .notNull)
                .column("original_transaction_id", type: .text)
                .column("fact", type: .text, .notNull)
                .column("signed", type: .text, .notNull)
                .column("received_at", type: .bigint, .notNull)
                .primaryKey("app_id", "notification_uuid")
                .run()
            try await db.create(index: "notifications_original").on("notifications")
                .column("app_id").column("original_transaction_id").run()
            try await db.create(index: "notifications_received").on("notifications")
                .column("app_id").column("received_at").run()

            // Derived: the events, in the order they were recorded (the cursor of the pull API), each once.
            try await db.create(table: "events")
                .column("seq", type: .bigint, .primaryKey(autoIncrement: true))
                .column("app_id", type: .text, .notNull)
                .column("event_id", type: .text, .notNull)
                .column("original_transaction_id", type: .text)
                .column("customer_id", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("type", type: .text, .notNull)
                .column("effective_at", type: .bigint, .notNull)
                .column("payload", type: .text, .notNull)
                .column("recorded_at", type: .bigint, .notNull)
                .column("retracted_at", type: .bigint)
                // The writing transaction's id on PostgreSQL (0 on SQLite, whose one writer commits in seq order).
                .column("tx_order", type: .bigint, .notNull)
                .run()
            try await db.create(index: "events_stream").on("events").column("app_id").column("tx_order").column("seq").run()
            try await db.create(index: "events_identity").unique().on("events").column("app_id").column("event_id").run()
            try await db.create(index: "events_original").on("events").column("app_id").column("original_transaction_id").run()
            // Derived: each customer's last computed state per environment.
            try await db.create(table: "customer_states")
                .column("customer_id", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("state", type: .text, .notNull)
                .column("next_change_at", type: .bigint)
                .column("computed_at", type: .bigint, .notNull)
                .primaryKey("customer_id", "environment")
                .run()
            try await db.create(index: "customer_states_next_change").on("customer_states").column("next_change_at").run()
            try await db.create(table: "audit_log")
                .column("seq", type: .bigint, .primaryKey(autoIncrement: true))
                .column("app_id", type: .text, .notNull)
                .column("action", type: .text, .notNull)
                .column("original_transaction_id", type: .text)
                .column("from_customer", type: .text)
                .column("to_customer", type: .text)
                .column("detail", type: .text, .notNull)
                .column("at", type: .bigint, .notNull)
                .run()
            try await db.create(index: "audit_app").on("audit_log").column("app_id").run()
        },
        Migration(version: 2, name: "money ledger, exchange rates") { db in
            // Derived, like the states: every period and one-time purchase with its price, refund and USD rate, written
            // in the transaction that recomputes its customer. Money in milliunits of `currency`.
            try await db.create(table: "ledger")
                .column("app_id", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("transaction_id", type: .text, .notNull)
                .column("customer_id", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("product_id", type: .text, .notNull)
                .column("group_id", type: .text, .notNull)
                .column("kind", type: .text, .notNull)
                .column("start_at", type: .bigint, .notNull)
                .column("end_at", type: .bigint)
                // The end of access, grace period included (NULL: never ends).
                .column("active_until", type: .bigint)
                .column("renewal_number", type: .bigint)
                .column("price", type: .bigint)
                .column("currency", type: .text)
                .column("storefront", type: .text)
                .column("family_shared", type: .bigint, .notNull)
                .column("refunded_at", type: .bigint)
                .column("refund_amount", type: .bigint)
                .column("monthly_price", type: .bigint)
                .column("commission_per_mille", type: .bigint, .notNull)
                .column("tax_per_mille", type: .bigint)
                .column("will_renew", type: .bigint)
                .column("grace_until", type: .bigint)
                // How a paid period began ('new', 'trialConversion', 'resubscription'; NULL for a renewal), and what
                // follows it in its subscription: the next paid period's start, its price per month, whether it was refunded.
                .column("acquisition", type: .text)
                .column("next_start", type: .bigint)
                .column("next_monthly_price", type: .bigint)
                .column("next_refunded", type: .bigint)
                // The day (days since 1970-01-01, UTC) of the purchase, and the USD rate used with its own day.
                .column("purchase_day", type: .bigint, .notNull)
                .column("usd_rate", type: .custom(SQLRaw("DOUBLE PRECISION")))
                .column("rate_day", type: .bigint)
                .primaryKey("app_id", "environment", "transaction_id")
                .run()
            try await db.create(index: "ledger_customer").on("ledger").column("customer_id").column("environment").run()
            try await db.create(index: "ledger_start").on("ledger").column("app_id").column("environment").column("start_at").run()
            try await db.create(index: "ledger_active_until").on("ledger")
                .column("app_id").column("environment").column("active_until").run()
            try await db.create(index: "ledger_currency").on("ledger").column("currency").column("purchase_day").run()
            // Loaded by the operator: USD per unit of a currency, by day.
            try await db.create(table: "exchange_rates")
                .column("currency", type: .text, .notNull)
                .column("day", type: .bigint, .notNull)
                .column("usd_per_unit", type: .custom(SQLRaw("DOUBLE PRECISION")), .notNull)
                .primaryKey("currency", "day")
                .run()
        },
        Migration(version: 3, name: "dashboard users, sessions") { db in
            // People who sign in to the dashboard: a bcrypt hash, never the password; the sign-in failures of the
            // current minute and the end of a lockout, shared by every server on the database.
            try await db.create(table: "dashboard_users")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("email", type: .text, .notNull, .unique)
                .column("password_hash", type: .text, .notNull)
                // 1: every app (an operator); 0: the apps in dashboard_user_apps.
                .column("all_apps", type: .bigint, .notNull)
                .column("failures", type: .bigint, .notNull)
                .column("failures_since", type: .bigint)
                .column("locked_until", type: .bigint)
                .column("created_at", type: .bigint, .notNull)
                .column("signed_in_at", type: .bigint)
                .run()
            try await db.create(table: "dashboard_user_apps")
                .column("user_id", type: .text, .notNull, .references("dashboard_users", "id"))
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .primaryKey("user_id", "app_id")
                .run()
            // The dashboard's sessions (Hummingbird's key-value persistence), so that several servers share them.
            try await db.create(table: "sessions")
                .column("key", type: .text, .primaryKey(autoIncrement: false))
                .column("value", type: .text, .notNull)
                .column("expires_at", type: .bigint)
                .run()
            try await db.create(index: "sessions_expiry").on("sessions").column("expires_at").run()
        },
        Migration(version: 4, name: "the ledger summed per hour") { db in
            // What the metrics over many subscriptions read (LedgerSummary), filled here from the ledger so far.
            try await LedgerSummary.create(db)
            // Servers of the previous version may still be writing the ledger: held off until this commits.
            if db.dialect.name == "postgresql" { try await db.raw("LOCK TABLE ledger IN SHARE ROW EXCLUSIVE MODE").run() }
            try await LedgerSummary.fill(db, where: "true")
            // What the remaining ledger reads look for among many rows, each indexed apart (partial indexes, whose
            // conditions the queries repeat word for word so that SQLite uses them too): the rows without a USD rate
            // (reported apart), the trials by start (the cohorts) and by end (the overview's conversion), the ends of
            // paid service (churn), and the periods followed by a cheaper one (revenue churn's downgrades).
            for (name, columns, condition) in [
                ("ledger_unconverted", "start_at", "usd_rate IS NULL AND currency IS NOT NULL"),
                ("ledger_trial_start", "start_at", "kind = 'trial'"),
                ("ledger_trial_end", "end_at", "kind = 'trial'"),
                ("ledger_lapses", "active_until", "next_start IS NULL OR next_start > active_until"),
                ("ledger_downgrades", "active_until", "next_monthly_price < monthly_price"),
            ] {
                try await db.raw(
                    "CREATE INDEX \(unsafeRaw: name) ON ledger (app_id, environment, \(unsafeRaw: columns)) WHERE \(unsafeRaw: condition)"
                )
                .run()
            }
        },
        Migration(version: 5, name: "the hourly summary's unfolded differences") { db in
            // Transactions append what they move the summary by, instead of updating its shared rows (LedgerSummary).
            try await LedgerSummary.createChanges(db)
        },
        Migration(version: 6, name: "integrations and their outbox") { db in
            // Where an app's events go: the readable configuration, and the secrets apart (never shown again, never
            // logged). `events`, `environments` and `retry_schedule` are JSON arrays (`events` NULL: every type).
            try await db.create(table: "integrations")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("kind", type: .text, .notNull)
                .column("name", type: .text, .notNull)
                .column("config", type: .text, .notNull)
                .column("events", type: .text)
                .column("environments", type: .text, .notNull)
                .column("enabled", type: .bigint, .notNull)
                .column("disabled_reason", type: .text)
                .column("retry_schedule", type: .text)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .run()
            try await db.create(index: "integrations_app").on("integrations").column("app_id").run()
            try await db.create(table: "integration_secrets")
                .column("integration_id", type: .text, .primaryKey(autoIncrement: false), .references("integrations", "id"))
                .column("secrets", type: .text, .notNull)
                .run()
            // The outbox: one row per recorded event (or retraction: a new events row, a new seq) and destination,
            // written in the transaction that records the event. The row names the event (its id and the seq of the
            // version it was written with); the payload is read when it is sent. `next_attempt_at` is also the lease:
            // a claim moves it past the attempt's end, so a row a killed server held comes back by itself.
            try await db.create(table: "deliveries")
                .column("integration_id", type: .text, .notNull)
                .column("event_seq", type: .bigint, .notNull)
                .column("app_id", type: .text, .notNull)
                .column("event_id", type: .text, .notNull)
                .column("retraction", type: .bigint, .notNull)
                .column("status", type: .text, .notNull)
                .column("attempts", type: .bigint, .notNull)
                .column("next_attempt_at", type: .bigint)
                .column("first_attempt_at", type: .bigint)
                .column("lease", type: .text)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .column("last_status", type: .bigint)
                .column("last_response", type: .text)
                .column("last_latency_ms", type: .bigint)
                .column("last_error", type: .text)
                .primaryKey("integration_id", "event_seq")
                .run()
            try await db.raw(
                "CREATE INDEX deliveries_due ON deliveries (integration_id, next_attempt_at) WHERE status IN ('pending', 'retrying')"
            ).run()
        },
        Migration(version: 7, name: "paywalls, placements, experiments, assignments, exposures") { db in
            try await db.create(table: "paywalls")
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("id", type: .text, .notNull)
                .column("products", type: .text, .notNull)
                .column("config", type: .text, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .primaryKey("app_id", "id")
                .run()
            try await db.create(table: "placements")
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("id", type: .text, .notNull)
                .column("default_paywall", type: .text, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .primaryKey("app_id", "id")
                .run()
            // The definition is the JSON the API takes and answers; status and phase are copied beside it for queries.
            try await db.create(table: "experiments")
                .column("app_id", type: .text, .notNull, .references("apps", "id"))
                .column("key", type: .text, .notNull)
                .column("placement_id", type: .text, .notNull)
                .column("definition", type: .text, .notNull)
                .column("status", type: .text, .notNull)
                .column("phase", type: .bigint, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .primaryKey("app_id", "key")
                .run()
            // Sticky: the first answer of a phase, kept so that later weight or coverage changes move nobody.
            try await db.create(table: "experiment_assignments")
                .column("app_id", type: .text, .notNull)
                .column("experiment_key", type: .text, .notNull)
                .column("phase", type: .bigint, .notNull)
                .column("customer_id", type: .text, .notNull)
                .column("variant", type: .text, .notNull)
                .column("assigned_at", type: .bigint, .notNull)
                .primaryKey("app_id", "experiment_key", "phase", "customer_id")
                .run()
            try await db.create(index: "experiment_assignments_customer").on("experiment_assignments").column("customer_id").run()
            // The first exposure of a customer to a phase. `merged_into`: the customer was merged into another that
            // had its own exposure; kept for the record, not counted again.
            try await db.create(table: "experiment_exposures")
                .column("app_id", type: .text, .notNull)
                .column("experiment_key", type: .text, .notNull)
                .column("phase", type: .bigint, .notNull)
                .column("customer_id", type: .text, .notNull)
                .column("variant", type: .text, .notNull)
                .column("placement_id", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("exposed_at", type: .bigint, .notNull)
                .column("merged_into", type: .text)
                .primaryKey("app_id", "experiment_key", "phase", "customer_id")
                .run()
            try await db.create(index: "experiment_exposures_customer").on("experiment_exposures").column("customer_id").run()
        },
        // The appAccountToken the server gives each app user id (a UUID for StoreKit's purchase option), so that a
        // notification that carries it finds the app user id even before the app posted the purchase.
        Migration(version: 8, name: "account tokens") { db in
            try await db.create(table: "account_tokens")
                .column("app_id", type: .text, .notNull)
                .column("token", type: .text, .notNull)
                .column("app_user_id", type: .text, .notNull)
                .column("created_at", type: .bigint, .notNull)
                .primaryKey("app_id", "token")
                .run()
        },
        // Every write of the ledger moves the hourly summary itself (LedgerSummary.createTriggers): a customer's
        // recompute writes the ledger in one statement, and no writer can leave the summary behind. Servers of an
        // earlier version write the differences table this drops, so they must be stopped before it runs.
        Migration(version: 9, name: "the hourly summary moved by triggers on the ledger") { db in
            try await LedgerSummary.moveByTriggers(db)
        },
        Migration(version: 10, name: "the ledger's rows to convert to USD indexed without its USD rows") { db in
            // Only rows in another currency are ever converted (`convertLedgerToUSD`, whose condition repeats this one
            // word for word so that SQLite uses the index too); a USD row written no longer updates this index.
            try await db.drop(index: "ledger_currency").run()
            try await db.raw("CREATE INDEX ledger_currency ON ledger (currency, purchase_day) WHERE currency <> 'USD'").run()
        },
        // A customer's recompute writes a row whose change is outside the sums (a renewal's predecessor) with an UPDATE of
        // those columns alone, which SQLite then prepares without the summary's trigger (LedgerSummary.sqliteTrigger).
        Migration(version: 11, name: "the summary's update trigger only for updates of the columns it sums (SQLite)") { db in
            try await LedgerSummary.limitUpdateTrigger(db)
        },
        // Deliveries written by triggers on events (OutboxTriggers) rather than by a statement of each ingest's own.
        // Servers of an earlier version write them too (the same rows, which the second write leaves alone).
        Migration(version: 12, name: "the outbox written by triggers on events") { db in
            try await OutboxTriggers.create(db)
        },
        // SQLite tests a condition on an index's own columns before it reads the row (a deferred seek), so churn's
        // lapses (`next_start IS NULL OR next_start > active_until`) are found through the index of ends once it carries
        // `next_start`, and their partial index, which every renewal updated twice (the new period in, its predecessor
        // out), goes. PostgreSQL reads the row before such a test (short of an index-only scan): its partial index stays.
        Migration(version: 13, name: "the ledger's lapses found through its index of ends (SQLite)") { db in
            guard db.dialect.name == "sqlite" else { return }
            try await db.drop(index: "ledger_active_until").run()
            try await db.drop(index: "ledger_lapses").run()
            try await db.create(index: "ledger_active_until").on("ledger")
                .column("app_id").column("environment").column("active_until").column("next_start").run()
        },
        // A lane claims its waiting deliveries in stream order (what a 429 held back goes first when the wait ends), so
        // the waiting ones are indexed in that order; the due index (by next attempt) keeps serving the look for lanes.
        Migration(version: 14, name: "the outbox's waiting deliveries indexed in stream order") { db in
            try await db.raw(
                "CREATE INDEX deliveries_waiting ON deliveries (integration_id, event_seq) WHERE status IN ('pending', 'retrying')"
            ).run()
        },
        // Refund requests (CONSUMPTION_REQUEST) and the answers the refund policy sends (RefundRequestRecords), and
        // what apps report of their customers for them: consent, usage, delivery, and the team's per-customer override.
        Migration(version: 15, name: "refund requests and consumption reports") { db in
            try await db.create(table: "refund_requests")
                .column("app_id", type: .text, .notNull)
                .column("notification_uuid", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("customer_id", type: .text, .notNull)
                .column("transaction_id", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("product_id", type: .text, .notNull)
                .column("product_type", type: .text)
                .column("reason", type: .text)
                .column("requested_at", type: .bigint, .notNull)
                .column("deadline_at", type: .bigint, .notNull)
                .column("status", type: .text, .notNull)
                .column("due_at", type: .bigint, .notNull)
                .column("next_attempt_at", type: .bigint, .notNull)
                .column("preference", type: .text)
                .column("decided_by", type: .text, .notNull)
                .column("note", type: .text)
                .column("attempts", type: .bigint, .notNull)
                .column("body", type: .text)
                .column("last_error", type: .text)
                .column("apple_status", type: .bigint)
                .column("answered_at", type: .bigint)
                .column("outcome", type: .text)
                .column("outcome_at", type: .bigint)
                .column("created_at", type: .bigint, .notNull)
                .primaryKey("app_id", "notification_uuid")
                .run()
            try await db.raw("CREATE INDEX refund_requests_due ON refund_requests (next_attempt_at) WHERE status = 'waiting'").run()
            try await db.create(index: "refund_requests_transaction").on("refund_requests").column("app_id").column("transaction_id")
                .run()
            try await db.create(index: "refund_requests_requested").on("refund_requests")
                .column("app_id").column("environment").column("requested_at").run()
            try await db.create(table: "consumption_reports")
                .column("app_id", type: .text, .notNull)
                .column("app_user_id", type: .text, .notNull)
                .column("consented", type: .bigint)
                .column("entitlement_used", type: .bigint)
                .column("consumption_percentage", type: .bigint)
                .column("delivery_status", type: .text)
                .column("sample_content_provided", type: .bigint)
                .column("refund_override", type: .text)
                .column("updated_at", type: .bigint, .notNull)
                .primaryKey("app_id", "app_user_id")
                .run()
        },
        // A parent's withdrawn consent (RESCIND_CONSENT) names the customer by app transaction, which transactions carry:
        // a customer's recompute reads the rescissions of the app transactions its transactions carry, whichever came first.
        Migration(version: 16, name: "transactions by app transaction, and rescinded consent") { db in
            try await db.alter(table: "transactions").column("app_transaction_id", type: .text).run()
            let extracted =
                db.dialect.name == "sqlite"
                ? "json_extract(payload, '$.appTransactionId')" : "(payload::json ->> 'appTransactionId')"
            try await db.raw("UPDATE transactions SET app_transaction_id = \(unsafeRaw: extracted)").run()
            try await db.raw(
                "CREATE INDEX transactions_app_transaction ON transactions (app_id, app_transaction_id) WHERE app_transaction_id IS NOT NULL"
            ).run()
            try await db.create(table: "consent_rescissions")
                .column("app_id", type: .text, .notNull)
                .column("app_transaction_id", type: .text, .notNull)
                .column("notification_uuid", type: .text, .notNull)
                .column("rescinded_at", type: .bigint, .notNull)
                .column("fact", type: .text, .notNull)
                .column("received_at", type: .bigint, .notNull)
                .primaryKey("app_id", "app_transaction_id", "notification_uuid")
                .run()
        },
        // Apple's Get Retention Message requests and what the server answered (a retried request is answered the same).
        Migration(version: 17, name: "retention message requests") { db in
            try await db.create(table: "retention_requests")
                .column("app_id", type: .text, .notNull)
                .column("request_identifier", type: .text, .notNull)
                .column("environment", type: .text, .notNull)
                .column("original_transaction_id", type: .text, .notNull)
                .column("customer_id", type: .text)
                .column("product_id", type: .text, .notNull)
                .column("user_locale", type: .text, .notNull)
                .column("answer", type: .text, .notNull)
                .column("message_identifier", type: .text)
                .column("decided_by", type: .text, .notNull)
                .column("signed_date", type: .bigint, .notNull)
                .column("answered_at", type: .bigint, .notNull)
                .primaryKey("app_id", "request_identifier")
                .run()
            try await db.raw("CREATE INDEX retention_requests_answered ON retention_requests (app_id, environment, answered_at)").run()
        },
        // Imports of existing customers from Apple: the job (its customers, parsed from the operator's file) and each
        // customer done, written with what importing it stored.
        Migration(version: 18, name: "imports of existing customers") { db in
            try await db.create(table: "import_jobs")
                .column("id", type: .text, .primaryKey(autoIncrement: false))
                .column("app_id", type: .text, .notNull)
                .column("format", type: .text, .notNull)
                .column("source", type: .text, .notNull)
                .column("customers", type: .text, .notNull)
                .column("total", type: .bigint, .notNull)
                .column("dropped", type: .text, .notNull)
                .column("emit_events", type: .bigint, .notNull)
                .column("status", type: .text, .notNull)
                .column("detail", type: .text)
                .column("created_at", type: .bigint, .notNull)
                .column("updated_at", type: .bigint, .notNull)
                .run()
            try await db.raw("CREATE INDEX import_jobs_app ON import_jobs (app_id, created_at)").run()
            try await db.create(table: "import_items")
                .column("job_id", type: .text, .notNull)
                .column("item", type: .bigint, .notNull)
                .column("outcome", type: .text, .notNull)
                .column("app_user_id", type: .text, .notNull)
                .column("transaction_ids", type: .text, .notNull)
                .column("detail", type: .text, .notNull)
                .column("done_at", type: .bigint, .notNull)
                .primaryKey("job_id", "item")
                .run()
        },
        // Where each exchange rate came from (`import`: a file or the API; `feed`: the built-in daily fetch; `fallback`:
        // the bundled table, replaced for a currency by any other source), and the feed's last attempts.
        Migration(version: 19, name: "exchange rates' sources, and the rates feed") { db in
            try await db.raw("ALTER TABLE exchange_rates ADD COLUMN source TEXT NOT NULL DEFAULT 'import'").run()
            try await db.create(table: "rate_feed")
                .column("url", type: .text, .primaryKey(autoIncrement: false))
                .column("attempted_at", type: .bigint, .notNull)
                .column("succeeded_at", type: .bigint)
                .column("latest_day", type: .bigint)
                .column("error", type: .text)
                .run()
        },
        // The export views: a documented, stable read-only surface for SQL users (docs/export.md, schema version 1),
        // changed only with a new version.
        Migration(version: 20, name: "the export views, version 1") { db in
            for view in ExportViews.views { try await db.raw("CREATE VIEW \(unsafeRaw: view.name) AS \(unsafeRaw: view.select)").run() }
        },
        // The environment a customer was first seen in (`CustomerEnvironments`): a customer made by a placement read
        // has no fact yet to tell it. Existing customers take their earliest purchase's; those without one stay NULL
        // and are shown in every environment, as before. The previous release may run beside it: it never reads the
        // column, and the customers it creates are NULL, shown as before.
        Migration(version: 21, name: "the environment a customer was first seen in") { db in
            try await db.raw("ALTER TABLE customers ADD COLUMN first_environment TEXT").run()
            try await db.raw(
                """
                UPDATE customers SET first_environment = (
                    SELECT t.environment FROM ownership o JOIN transactions t
                        ON t.app_id = o.app_id AND t.original_transaction_id = o.original_transaction_id
                    WHERE o.customer_id = customers.id ORDER BY t.purchase_date, t.transaction_id LIMIT 1)
                """
            ).run()
        },
        // Dashboard sessions keyed by the SHA-256 of their id (as API keys are), with the user they belong to, so that a
        // password change ends them. Sessions stored before are dropped: everyone signs in again once. A release
        // before this one may run beside it for the API, but not for the dashboard: the two cannot read each other's
        // sessions (a user bounced between them is asked to sign in again). The sign-in lockout columns of
        // `dashboard_users` are no longer written (attempts are throttled in memory); they stay for the release before.
        Migration(version: 22, name: "dashboard sessions stored by hash, with their user") { db in
            try await db.raw("DELETE FROM sessions").run()
            try await db.raw("ALTER TABLE sessions ADD COLUMN user_id TEXT").run()
            try await db.create(index: "sessions_user").on("sessions").column("user_id").run()
        },
        // The first sightings of app user ids (account tokens) by registration time, for the prune of those that never
        // became a customer (`pruneUnclaimedAccountTokens`). An index only: the previous release may run beside it.
        Migration(version: 23, name: "account tokens by registration time", besidePrevious: true) { db in
            try await db.create(index: "account_tokens_created").on("account_tokens").column("created_at").run()
        },
        // Imports read in bounded memory: the posted file is stored in parts (`import_uploads`) until the server's
        // import worker has read it, line by line, into the customers it names (`import_customers`, a file's lines
        // grouped by app user id) and the lines it left out (`import_dropped`); the job row keeps only counts. Jobs of
        // the release before are moved into the new tables here. A release before this one may run beside it, but not
        // run or read imports: it finds the jobs' customer lists empty.
        Migration(version: 24, name: "imports read in bounded memory") { db in
            try await db.create(table: "import_uploads")
                .column("upload_id", type: .text, .notNull)
                .column("part", type: .bigint, .notNull)
                .column("bytes", type: .blob, .notNull)
                .primaryKey("upload_id", "part")
                .run()
            try await db.create(table: "import_customers")
                .column("job_id", type: .text, .notNull)
                .column("item", type: .bigint, .notNull)
                .column("key", type: .text, .notNull)
                .column("app_user_id", type: .text)
                .column("aliases", type: .text, .notNull)
                .column("transaction_ids", type: .text, .notNull)
                .column("app_account_token", type: .text)
                .column("environment", type: .text)
                .column("line", type: .bigint, .notNull)
                .primaryKey("job_id", "item")
                .run()
            try await db.raw("CREATE UNIQUE INDEX import_customers_key ON import_customers (job_id, key)").run()
            try await db.create(table: "import_dropped")
                .column("job_id", type: .text, .notNull)
                .column("seq", type: .bigint, .notNull)
                .column("line", type: .bigint, .notNull)
                .column("reason", type: .text, .notNull)
                .primaryKey("job_id", "seq")
                .run()
            try await db.raw("ALTER TABLE import_jobs ADD COLUMN dropped_count BIGINT NOT NULL DEFAULT 0").run()
            try await db.raw("ALTER TABLE import_jobs ADD COLUMN upload_id TEXT").run()
            try await LegacyImportJobs.move(db)
        },
    ]
}
