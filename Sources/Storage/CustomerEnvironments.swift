import SQLKit

/// Which environments a customer belongs to, for what is counted per environment (the customer list, lifetime value):
/// the one it was first seen in (`customers.first_environment`, written when a customer is made before any fact, by a
/// placement read), every environment it has a purchase in, and every environment it was exposed to a split test in.
/// A TestFlight tester who later buys on the App Store belongs to both; a sandbox tester never shows in Production.
/// A customer from before the column (NULL) with no purchase belongs to every environment, as all did before.
public enum CustomerEnvironments {
    /// The condition that the customer row aliased `c` belongs to `environment`.
    public static func contains(_ environment: String) -> SQLQueryString {
        """
        (c.first_environment = \(bind: environment)
            OR EXISTS (SELECT 1 FROM ownership o JOIN transactions t
                ON t.app_id = o.app_id AND t.original_transaction_id = o.original_transaction_id
                WHERE o.customer_id = c.id AND t.environment = \(bind: environment))
            OR EXISTS (SELECT 1 FROM experiment_exposures x WHERE x.customer_id = c.id AND x.environment = \(bind: environment))
            OR (c.first_environment IS NULL AND NOT EXISTS (SELECT 1 FROM ownership o WHERE o.customer_id = c.id)))
        """
    }
}
