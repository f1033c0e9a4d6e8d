import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

@Suite("Auth")
struct AuthTests {
    @Test("no key, a wrong key, a pk on an admin endpoint, another app's keys: 401, 401, 403, 404, and no data leaks")
    func matrix() async throws {
        let h = try await Harness.make(.sqlite)
        let other = try await h.core.administration.create(Harness.config())
        h.clock.set(at(1))
        let purchase = Purchase(
            transactionId: "1", originalTransactionId: "1", purchase: at(0), expires: at(30), signed: at(0), token: "alice")
        try await h.test { client in
            // Alice buys in app A only.
            _ = try await client.execute(
                uri: "/v1/customers/alice/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))

            let noKey = try await client.customer("alice", key: "")
            #expect(noKey.status == .unauthorized)
            let none = try await client.execute(uri: "/v1/customers/alice", method: .get)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            #expect(try errorCode(none) == "unauthenticated")

            for wrong in ["pk_nope", "sk_x_y", h.app.publicKey + "x", "Bearer", String(h.app.secretKey.dropLast())] {
                let response = try await client.customer("alice", key: wrong)
                #expect(response.status == .unauthorized, "\(wrong)")
                #expect(!String(buffer: response.body).contains("alice"))
            }
            // A pk presented as an sk (same id, other kind) is not valid either.
            let swapped = "sk" + h.app.publicKey.dropFirst(2)
            #expect(try await client.customer("alice", key: swapped).status == .unauthorized)

            // Public keys never reach admin endpoints.
            for (uri, method) in [
                ("/v1/apps/\(h.app.appId)", HTTPRequest.Method.get), ("/v1/apps/\(h.app.appId)/events", .get),
                ("/v1/apps/\(h.app.appId)/products", .get), ("/v1/customers/alice/events", .get),
                ("/v1/subscribers/alice", .get),
            ] {
                let response = try await client.execute(uri: uri, method: method, headers: headers(h.app.publicKey))
                #expect(response.status == .forbidden, "\(uri)")
                #expect(try errorCode(response) == "forbidden")
            }
            // App B's secret key on app A's paths: as if app A did not exist.
            let foreign = try await client.execute(uri: "/v1/apps/\(h.app.appId)", method: .get, headers: headers(other.secretKey))
            #expect(foreign.status == .notFound)
            #expect(!String(buffer: foreign.body).contains(bundleId))
            // App B's public key reads app B's alice, who has bought nothing.
            #expect(try customer(try await client.customer("alice", key: other.publicKey)).state == .new)
            #expect(try customer(try await client.customer("alice", key: h.app.publicKey)).state == .active)
        }
    }

    @Test("the Bearer scheme in any case and with more than one space (RFC 9110), or no scheme at all")
    func schemeCase() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            for authorization in ["bearer \(h.app.publicKey)", "BEARER  \(h.app.publicKey)", "Bearer \(h.app.publicKey)", h.app.publicKey] {
                let response = try await client.execute(uri: "/v1/customers/alice", method: .get, headers: [.authorization: authorization])
                #expect(response.status == .ok, "\(authorization)")
            }
            for authorization in ["Basic \(h.app.publicKey)", "bearer", "bearerpk_x", "Bearer\t\(h.app.publicKey)x"] {
                let response = try await client.execute(uri: "/v1/customers/alice", method: .get, headers: [.authorization: authorization])
                #expect(response.status == .unauthorized, "\(authorization)")
            }
        }
        #expect(APIKeyAuthenticator.credential("bearer sk_a_b") == "sk_a_b")
        #expect(APIKeyAuthenticator.credential("sk_a_b") == "sk_a_b")
    }

    @Test("a rotated key stops working at once; the new one works; secrets never appear in responses")
    func rotation() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            let rotated = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/keys/rotate", method: .post,
                headers: headers(h.app.secretKey), body: body(["kind": "public"]))
            #expect(rotated.status == .created)
            let newKey = try decode(RotatedKey.self, rotated).key
            #expect(newKey.hasPrefix("pk_"))
            #expect(try await client.customer("alice", key: h.app.publicKey).status == .unauthorized)
            #expect(try await client.customer("alice", key: newKey).status == .ok)

            let patched = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey),
                body: body(["sharedSecret": "s3cr3t-shared"]))
            #expect(patched.status == .ok)
            let view = try await client.execute(uri: "/v1/apps/\(h.app.appId)", method: .get, headers: headers(h.app.secretKey))
            let text = String(buffer: view.body)
            #expect(!text.contains("s3cr3t-shared"))
            #expect(try decode(AppConfiguration.View.self, view).sharedSecretConfigured)
            // The stored key is a hash: the database never holds the key.
            let keys = try await h.core.database.reading { try await $0.keys(app: h.app.appId) }
            #expect(!keys.isEmpty)
            #expect(keys.allSatisfy { !newKey.contains($0.secretHash) && $0.secretHash.count == 64 })
        }
    }
}
