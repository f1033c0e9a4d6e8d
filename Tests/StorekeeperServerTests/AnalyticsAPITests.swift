import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// The analytics endpoints' answers to bad input: a named 400, never a 5xx.
@Suite("Analytics API")
struct AnalyticsAPITests {
    @Test(
        "rates: only the operator token loads them (an app's key is 403, none 401); a currency quoted twice for a day is a 400 naming its lines",
        arguments: TestDatabase.available)
    func rates(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            let file = ByteBuffer(string: "Date,USD,JPY,\n2026-01-02,1.1,160,\n")
            for key in [h.app.secretKey, h.app.publicKey] {
                var appKey = headers(key)
                appKey[.contentType] = "text/csv"
                let refused = try await client.execute(uri: "/v1/rates", method: .put, headers: appKey, body: file)
                #expect(refused.status == .forbidden)
                #expect(try decode(ErrorBody.self, refused).error.message.contains("operator"))
            }
            for authorization in [nil, "Bearer sk_nope_nope", "Bearer " + testOperatorTokenText + "x"] {
                var fields: HTTPFields = [.contentType: "text/csv"]
                if let authorization { fields[.authorization] = authorization }
                let refused = try await client.execute(uri: "/v1/rates", method: .put, headers: fields, body: file)
                #expect(refused.status == .unauthorized, "\(authorization ?? "none")")
            }
            #expect(try await client.execute(uri: "/v1/rates", method: .get, headers: headers(h.app.secretKey)).status == .ok)
            #expect(try await client.execute(uri: "/v1/rates", method: .get, headers: operatorHeaders()).status == .unauthorized)
            let loaded = try await client.execute(
                uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: "Date,USD,JPY,\n2026-01-02,1.1,160,\n")
            )
            #expect(loaded.status == .ok)
            #expect(String(buffer: loaded.body).contains(#""imported":2"#))
            let twice = try await client.execute(
                uri: "/v1/rates", method: .put, headers: operatorHeaders(),
                body: ByteBuffer(string: "date,currency,usd_per_unit\n2026-01-02,EUR,1.09\n2026-01-02,EUR,1.1\n"))
            #expect(twice.status == .badRequest)
            let error = try decode(ErrorBody.self, twice).error
            #expect(error.field == "rates")
            #expect(error.message == "line 3: a second rate for EUR on 2026-01-02 (the first is on line 2)")
        }
    }

    @Test("metrics: an unknown metric, a path for a time zone, a bad to: 400 naming the parameter", arguments: TestDatabase.available)
    func badParameters(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        try await h.test { client in
            let key = headers(h.app.secretKey)
            let base = "/v1/apps/\(h.app.appId)/metrics"
            for (query, field) in [
                ("/mmr", "metric"), ("/mrr?tz=..%2F..%2F..%2Fetc%2Fpasswd", "tz"), ("/mrr?to=2026-13-01", "to"),
                ("/revenue?from=2026-02-01&to=2026-01-01", "from"),
            ] {
                let response = try await client.execute(uri: base + query, method: .get, headers: key)
                #expect(response.status == .badRequest, "\(query)")
                #expect(try decode(ErrorBody.self, response).error.field == field, "\(query)")
            }
        }
    }
}
