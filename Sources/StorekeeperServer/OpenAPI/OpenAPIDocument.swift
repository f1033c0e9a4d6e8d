import Foundation
import OpenAPIKit
import Yams

/// The OpenAPI 3.1 description of every endpoint, a typed OpenAPIKit value written as YAML with Yams and served at
/// `/openapi.yaml`. Tests check that its paths and methods are exactly the router's, that OpenAPIKit's validation
/// passes, and that every response of the API tests fits its schema; CI runs Schemathesis against it.
///
/// The limits in the schemas are the code's own constants (`AppUserIds.maxLength`, `EventQuery.limits`, the known
/// environments), so that the document and the server cannot disagree about what is accepted.
enum OpenAPIDocument {
    static let document = OpenAPI.Document(
        openAPIVersion: .v3_1_1,
        info: .init(
            title: "Storekeeper",
            description: """
                A self-hosted subscription backend for App Store apps. Errors are always \
                `{"error": {"code", "message", "field"?}}`; bodies over 256 KB get 413; a method a path does not take gets \
                405 with `Allow`; 503 (with Retry-After) means the database or Apple could not be reached and a retry can \
                succeed. Instants are epoch milliseconds. Customer endpoints take the app's public key (pk_…) or a secret key \
                (sk_…); admin endpoints a secret key of the app in the path.
                """,
            version: "1.0.0"),
        servers: [.init(url: URL(string: "http://127.0.0.1:8080") ?? URL(fileURLWithPath: "/"))],
        paths: allPaths,
        components: components,
        security: [[.component(named: "apiKey"): []]])

    /// The document as served.
    static let yaml: String = {
        do {
            return try YAMLEncoder().encode(document)
        } catch {
            // The document is a constant of the program: a failure here is a bug that every test run would show.
            preconditionFailure("the OpenAPI document encodes as YAML: \(error)")
        }
    }()

    /// For each documented path template (`/v1/apps/{appId}`), the methods it takes, upper case.
    static let methodsByPath: [(template: String, methods: [String])] = document.paths.compactMap { path, item in
        guard let item = item.pathItemValue else { return nil }
        return (path.rawValue, item.endpoints.map { $0.method.rawValue.uppercased() })
    }
}
