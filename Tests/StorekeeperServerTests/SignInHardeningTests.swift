import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Sign-in under attack (issue 61, items 1, 3, 10, 11, 13): bcrypt on its own bounded threads, attempts throttled
/// per client and per account without a lock anyone can use, the same answer and work for unknown accounts, nothing
/// stored until someone signs in, sessions stored by hash and ended by a password change.
@Suite("Sign-in hardening")
struct SignInHardeningTests {
    static let password = DashboardTests.password

    @Test("wrong passwords for one account from one address wait longer each time; another address is not kept out")
    func accountDelay() async throws {
        let h = try await Harness.make(.sqlite)
        _ = try await DashboardTests.user(h)
        let accounts = h.core.dashboardAccounts
        h.clock.set(at(1))
        let attacker = "203.0.113.7"
        for _ in 1...5 {
            #expect(try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .wrongCredentials)
        }
        // The sixth waits a second, right password or not; from the user's own address the right one works.
        #expect(try await accounts.signIn(email: "ops@example.com", password: Self.password, client: attacker) == .throttled(retryAfter: 1))
        guard case .signedIn = try await accounts.signIn(email: "ops@example.com", password: Self.password, client: "198.51.100.1") else {
            Issue.record("the user was kept out by another address's failures")
            return
        }
        // Each further failure doubles the wait: 1 s, 2 s, 4 s.
        h.clock.set(at(1) + 1_000)
        #expect(try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .wrongCredentials)
        #expect(
            try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .throttled(retryAfter: 2))
        h.clock.set(at(1) + 3_000)
        #expect(try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .wrongCredentials)
        #expect(
            try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .throttled(retryAfter: 4))
        // Never a hard lock: once the wait is over the right password signs in, and the count starts again.
        h.clock.set(at(1) + 7_000)
        guard case .signedIn = try await accounts.signIn(email: "ops@example.com", password: Self.password, client: attacker) else {
            Issue.record("the right password after the wait did not sign in")
            return
        }
        h.clock.set(at(1) + 70_000)
        #expect(try await accounts.signIn(email: "ops@example.com", password: "wrong password", client: attacker) == .wrongCredentials)
        await h.close()
    }

    @Test("an unknown email gets the same answers as a real one, and the same bcrypt work, a password over 72 bytes too")
    func noEnumeration() async throws {
        let h = try await Harness.make(.sqlite)
        _ = try await DashboardTests.user(h)
        let accounts = h.core.dashboardAccounts
        h.clock.set(at(1))
        var outcomes: [String: [SignInOutcome]] = [:]
        for email in ["ops@example.com", "nobody@example.com"] {
            let client = "client-\(email)"
            for _ in 1...6 {
                outcomes[email, default: []].append(try await accounts.signIn(email: email, password: "wrong password", client: client))
            }
        }
        #expect(outcomes["ops@example.com"] == outcomes["nobody@example.com"])
        #expect(outcomes["nobody@example.com"]?.last == .throttled(retryAfter: 1))

        // One verification each, whatever the account and the password's length (a long one is cut, checked, refused).
        let long = String(repeating: "x", count: 200)
        for (index, (email, password)) in [
            ("ops@example.com", long), ("nobody@example.com", long), ("ops@example.com", "wrong password"),
            ("not an email", "wrong password"), ("nobody@example.com", ""),
        ].enumerated() {
            let before = accounts.hashing.runs
            #expect(try await accounts.signIn(email: email, password: password, client: "other-\(index)") == .wrongCredentials)
            #expect(accounts.hashing.runs == before + 1, "\(email), \(password.count) characters")
        }
        // The right password's first 72 bytes followed by more: refused, not signed in as bcrypt alone would.
        #expect(try await accounts.signIn(email: "ops@example.com", password: Self.password + long, client: "long") == .wrongCredentials)
        await h.close()
    }

    @Test("per client address: ten attempts a minute, then 429 with Retry-After, the same words for any account")
    func perClient() async throws {
        let h = try await Harness.make(.sqlite)
        _ = try await DashboardTests.user(h)
        let accounts = h.core.dashboardAccounts
        h.clock.set(at(1))
        for index in 1...10 {
            #expect(
                try await accounts.signIn(email: "u\(index)@example.com", password: "wrong password", client: "192.0.2.1")
                    == .wrongCredentials)
        }
        #expect(
            try await accounts.signIn(email: "ops@example.com", password: Self.password, client: "192.0.2.1") == .throttled(retryAfter: 6))
        h.clock.set(at(1) + 6_000)
        guard case .signedIn = try await accounts.signIn(email: "ops@example.com", password: Self.password, client: "192.0.2.1") else {
            Issue.record("a token did not come back after six seconds")
            return
        }
        // Over HTTP (in-process: every request is one unknown client), the eleventh in a minute is a 429.
        try await h.application().test(.router) { base in
            let client = ConformingClient(base: base)
            for index in 1...10 {
                let wrong = try await DashboardTests.signIn(client, email: "v\(index)@example.com", password: "wrong password")
                #expect(wrong.response.status == .unauthorized)
            }
            let throttled = try await DashboardTests.signIn(client, email: "ops@example.com", password: Self.password)
            #expect(throttled.response.status == .tooManyRequests)
            #expect(throttled.response.headers[.retryAfter] == "6")
            #expect(String(buffer: throttled.response.body).contains("Too many sign-in attempts: please wait 6 seconds"))
            // While it must wait, nothing of an attempt is read: no form, no token, still 429 (not 403), cheaply.
            let unread = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "%%%not a form"))
            #expect(unread.status == .tooManyRequests && unread.headers[.retryAfter] != nil)
        }
        await h.close()
    }

    @Test("behind a trusted proxy each X-Forwarded-For client has its own allowance; without one the header is ignored")
    func forwardedFor() async throws {
        let h = try await Harness.make(.sqlite)
        h.clock.set(at(1))
        let forwardedHeader = try #require(HTTPField.Name("X-Forwarded-For"))
        let proxies = try TrustedProxies(parsing: "127.0.0.1, ::1")
        @Sendable func attempts(_ client: any TestClientProtocol, forwardedFor: String, count: Int) async throws -> [HTTPResponse.Status] {
            var statuses: [HTTPResponse.Status] = []
            for index in 1...count {
                let page = try await client.execute(uri: "/dashboard/sign-in", method: .get)
                var (headers, body) = DashboardTests.form(
                    [
                        ("email", "w\(index)@example.com"), ("password", "wrong password"),
                        ("csrf", DashboardTests.csrf(String(buffer: page.body)) ?? ""),
                    ], cookie: DashboardTests.cookie(page))
                headers[forwardedHeader] = forwardedFor
                statuses.append(try await client.execute(uri: "/dashboard/sign-in", method: .post, headers: headers, body: body).status)
            }
            return statuses
        }
        try await h.application { $0.trustedProxies = proxies }.test(.live) { client in
            let first = try await attempts(client, forwardedFor: "1.2.3.4, 198.51.100.9", count: 11)
            #expect(first.prefix(10).allSatisfy { $0 == .unauthorized } && first.last == .tooManyRequests)
            // Another client behind the same proxy: its own allowance. The left-most entry is anyone's to write.
            #expect(try await attempts(client, forwardedFor: "198.51.100.10", count: 1) == [.unauthorized])
            #expect(try await attempts(client, forwardedFor: "6.6.6.6, 198.51.100.9", count: 1) == [.tooManyRequests])
        }
        let other = try await Harness.make(.sqlite)
        other.clock.set(at(1))
        try await other.application().test(.live) { client in
            let statuses = try await attempts(client, forwardedFor: "198.51.100.11", count: 10)
            #expect(statuses.allSatisfy { $0 == .unauthorized })
            // Not trusted: the header does not make a new client.
            #expect(try await attempts(client, forwardedFor: "198.51.100.12", count: 1) == [.tooManyRequests])
        }
        await h.close()
        await other.close()
    }

    @Test("client addresses: the peer, or behind a trusted proxy the right-most untrusted hop; proxies' settings are IPs")
    func clientAddresses() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.1, ::1 ,::ffff:10.0.0.2")
        #expect(proxies.client(peer: "203.0.113.5", forwardedFor: ["1.1.1.1"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["1.1.1.1, 203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.1", forwardedFor: ["1.1.1.1", "203.0.113.5, 10.0.0.2"]) == "203.0.113.5")
        #expect(proxies.client(peer: "::1", forwardedFor: []) == "::1")
        #expect(proxies.client(peer: "::ffff:10.0.0.1", forwardedFor: ["2001:db8::1"]) == "2001:db8::1")
        #expect(proxies.client(peer: nil, forwardedFor: ["1.1.1.1"]) == "unknown")
        #expect(TrustedProxies.none.client(peer: "127.0.0.1", forwardedFor: ["1.1.1.1"]) == "127.0.0.1")
        #expect(throws: SettingError.self) { try TrustedProxies(parsing: "10.0.0.0/8") }
        #expect(throws: SettingError.self) { try TrustedProxies(parsing: "proxy.internal") }
    }

    @Test("bcrypt runs at most its threads and queue at once; the rest is refused at once with 429")
    func boundedHashing() async throws {
        let hashing = PasswordHashing(queue: 0)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let busy = (0..<PasswordHashing.threads).map { _ in
            Task {
                try await hashing.run {
                    started.signal()
                    release.wait()
                    return true
                }
            }
        }
        for _ in busy {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    started.wait()
                    continuation.resume()
                }
            }
        }
        #expect(hashing.inFlight == PasswordHashing.threads)
        do {
            _ = try await hashing.run { true }
            Issue.record("a hash past the threads and queue was run")
        } catch CoreError.tooManyRequests(_, let retryAfter) {
            #expect(retryAfter == 1)
        }
        #expect(ErrorResponse(CoreError.tooManyRequests("busy", retryAfter: 1)).status == .tooManyRequests)
        #expect(ErrorResponse(CoreError.tooManyRequests("busy", retryAfter: 1)).headers[.retryAfter] == "1")
        for _ in busy { release.signal() }
        for task in busy { #expect(try await task.value) }
        #expect(hashing.inFlight == 0)
        #expect(try await hashing.run { 7 } == 7)
    }

    @Test("the sign-in page stores nothing; a session is stored by its hash once someone signs in", arguments: TestDatabase.available)
    func sessionsStored(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await DashboardTests.user(h)
        try await h.application().test(.router) { base in
            let client = ConformingClient(base: base)
            for _ in 1...25 { #expect(try await client.execute(uri: "/dashboard/sign-in", method: .get).status == .ok) }
            #expect(try await h.core.database.reading { try await $0.sessionCount() } == 0)
            let (signedIn, cookie) = try await DashboardTests.signIn(client, email: "ops@example.com", password: Self.password)
            #expect(signedIn.status == .seeOther)
            #expect(try await h.core.database.reading { try await $0.sessionCount() } == 1)
            // The cookie's id is nowhere in the table; its hash is.
            let id = String((cookie ?? "").drop { $0 != "=" }.dropFirst())
            let stored = try await h.core.database.reading { try await $0.sql.raw("SELECT key, user_id FROM sessions").all() }
            let key = try stored.first?.decode(column: "key", as: String.self) ?? ""
            #expect(key.hasPrefix("sha256:") && key.count == 7 + 64)
            #expect(!key.contains(id) && !id.isEmpty)
            #expect(try stored.first?.decode(column: "user_id", as: String?.self) != nil)
            #expect(try await DashboardTests.get(client, "/dashboard/apps/\(h.app.appId)", cookie: cookie).status == .ok)
        }
        await h.close()
    }

    @Test("a password change, and deleting the user, end every session of the user", arguments: TestDatabase.available)
    func passwordChangeEndsSessions(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        _ = try await DashboardTests.user(h)
        _ = try await DashboardTests.user(h, email: "other@example.com")
        try await h.application().test(.router) { base in
            let client = ConformingClient(base: base)
            let page = "/dashboard/apps/\(h.app.appId)"
            let laptop = try await DashboardTests.signIn(client, email: "ops@example.com", password: Self.password).cookie
            let phone = try await DashboardTests.signIn(client, email: "ops@example.com", password: Self.password).cookie
            let colleague = try await DashboardTests.signIn(client, email: "other@example.com", password: Self.password).cookie
            for cookie in [laptop, phone, colleague] { #expect(try await DashboardTests.get(client, page, cookie: cookie).status == .ok) }
            _ = try await h.core.dashboardAccounts.resetPassword(email: "ops@example.com", password: "a new password of mine", cost: 4)
            for cookie in [laptop, phone] { #expect(try await DashboardTests.get(client, page, cookie: cookie).status == .seeOther) }
            #expect(try await DashboardTests.get(client, page, cookie: colleague).status == .ok)
            try await h.core.dashboardAccounts.delete(email: "other@example.com")
            #expect(try await h.core.database.reading { try await $0.sessionCount() } == 0)
        }
        await h.close()
    }
}
