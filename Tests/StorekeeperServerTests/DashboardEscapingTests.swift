import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Every page that echoes what someone typed or stored escapes it by Unicode scalar (issue 61, item 7): a quote
/// joined to a combining mark (`"` U+0301, one grapheme) is escaped like any quote, so that no attribute can be
/// closed and another one added. The payloads are an outside probe's.
@Suite("Dashboard escaping")
struct DashboardEscapingTests {
    /// What was typed, and how it must appear in the page.
    static let payloads: [(raw: String, escaped: String)] = [
        ("\"\u{301} onmouseover=alert(1) x=\"", "&quot;\u{301} onmouseover=alert(1) x=&quot;"),
        ("'\u{301} onfocus='alert(2)", "&#39;\u{301} onfocus=&#39;alert(2)"),
        ("`x`<b>bold</b>&amp;", "&#96;x&#96;&lt;b&gt;bold&lt;/b&gt;&amp;amp;"),
    ]

    /// Whether `needle`'s bytes occur in `text`'s (byte for byte: `String.contains` compares graphemes).
    static func containsBytes(_ text: String, _ needle: String) -> Bool {
        let haystack = Array(text.utf8)
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty, haystack.count >= pattern.count else { return false }
        return (0...(haystack.count - pattern.count)).contains { start in haystack[start..<(start + pattern.count)].elementsEqual(pattern) }
    }

    /// The page echoes `payload` escaped and never raw; no quote anywhere is followed by a combining mark.
    static func expectEscaped(_ response: TestResponse, _ payload: (raw: String, escaped: String), _ page: String) {
        let html = String(buffer: response.body)
        #expect(containsBytes(html, payload.escaped), "\(page) does not echo \(payload.escaped.debugDescription)")
        #expect(!containsBytes(html, payload.raw), "\(page) echoes \(payload.raw.debugDescription) raw")
        let scalars = Array(html.unicodeScalars)
        let joined = zip(scalars, scalars.dropFirst()).contains { ["\"", "'", "`", "<"].contains($0.0) && $0.1 == "\u{301}" }
        #expect(!joined, "\(page) holds a quote joined to a combining mark")
    }

    @Test("the escaping itself: by scalar, each of & < > \" ' ` replaced, nothing else changed")
    func escaping() {
        for payload in Self.payloads { #expect(DashboardFormat.escaped(payload.raw) == payload.escaped) }
        #expect(DashboardFormat.escaped("café = ok") == "café = ok")
        #expect(DashboardFormat.escaped("\"\u{301}") == "&quot;\u{301}")
    }

    @Test("sign-in's email, the customer search, metric controls, event filters and stored variant keys: escaped everywhere")
    func pages() async throws {
        let h = try await Harness.make(.sqlite)
        _ = try await DashboardTests.user(h)
        try await h.test { client in
            let app = "/dashboard/apps/\(h.app.appId)"
            // Reflected before anyone signs in: the email of a failed sign-in.
            for payload in Self.payloads {
                let failed = try await DashboardTests.signIn(client, email: payload.raw, password: "wrong password")
                #expect(failed.response.status == .unauthorized)
                Self.expectEscaped(failed.response, payload, "the sign-in page")
            }
            // Stored: variant keys, shown on the experiment's page and the list.
            let base = "/v1/apps/\(h.app.appId)"
            _ = try await client.send(.put, base + "/paywalls/plain", h.app.secretKey, #"{"products": ["pro.monthly"]}"#)
            _ = try await client.send(.put, base + "/placements/onboarding", h.app.secretKey, #"{"defaultPaywall": "plain"}"#)
            let variants = Self.payloads.map { payload in
                let key = String(decoding: (try? JSONEncoder().encode(payload.raw)) ?? Data(), as: UTF8.self)
                return #"{"key": \#(key)}"#
            }
            let created = try await client.send(
                .post, base + "/experiments", h.app.secretKey,
                #"{"key": "probe", "placement": "onboarding", "variants": [\#(variants.joined(separator: ","))]}"#)
            #expect(created.status == .created, "\(String(buffer: created.body))")

            let (_, cookie) = try await DashboardTests.signIn(client, email: "ops@example.com", password: DashboardTests.password)
            let experiment = try await DashboardTests.get(client, app + "/experiments/probe", cookie: cookie)
            #expect(experiment.status == .ok)
            for payload in Self.payloads {
                Self.expectEscaped(experiment, payload, "the experiment's page")
                let query = DashboardPaths.queryEscaped(payload.raw)
                for (uri, page) in [
                    (app + "/customers?q=" + query, "the customer search"),
                    (app + "/metrics/mrr?from=" + query, "a metric's from control"),
                    (app + "/metrics/revenue?storefront=" + query, "a metric's storefront control"),
                    (app + "/events?type=" + query, "the events' type filter"),
                ] {
                    Self.expectEscaped(try await DashboardTests.get(client, uri, cookie: cookie), payload, page)
                }
            }
        }
    }
}
