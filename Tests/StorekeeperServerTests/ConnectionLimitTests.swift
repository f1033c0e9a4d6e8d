import Dispatch
import Foundation
import Hummingbird
import HummingbirdTesting
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

#if canImport(Glibc)
    import Glibc
#endif

/// No client holds the server's connections (issue 61, item 2): headers, bodies and idle keep-alive connections time
/// out, and past the connection cap a new connection closes the one idle longest, so `/health` still answers.
@Suite("Connection limits")
struct ConnectionLimitTests {
    /// A plain TCP connection to the server, byte by byte as a slow or hostile client would use it. Its waits block a
    /// thread of their own (never one of the cooperative pool's, which the server's handlers need).
    final class RawConnection: @unchecked Sendable {
        // @unchecked: `fd` is set once, and each test uses its connections from one task at a time.
        let fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw HarnessError("could not connect to 127.0.0.1:\(port)") }
        }

        deinit { close(fd) }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// What arrives within `seconds`: bytes, empty when the server closed the connection, nil when nothing came.
        func receive(within seconds: Double) async -> [UInt8]? {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: self.blockingReceive(within: seconds)) }
            }
        }

        private func blockingReceive(within seconds: Double) -> [UInt8]? {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count <= 0 ? [] : Array(buffer.prefix(count))
        }

        /// Whether the server closed the connection within `seconds` (reading past any answer).
        func closed(within seconds: Double) async -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                guard let bytes = await receive(within: deadline.timeIntervalSinceNow) else { return false }
                if bytes.isEmpty { return true }
            }
            return false
        }
    }

    static let health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"

    @Test("slow headers, a stalled body and an idle keep-alive connection are closed after their timeouts; a request in time is answered")
    func timeouts() async throws {
        let h = try await Harness.make(.sqlite)
        var limits = ConnectionLimits()
        limits.headerTimeout = .seconds(1)
        limits.bodyTimeout = .seconds(1)
        limits.idleTimeout = .seconds(1)
        try await h.application { $0.connections = limits }.test(.live) { client in
            let port = try #require(client.port)
            let slowHeaders = try RawConnection(port: port)
            slowHeaders.send("GET /health HTTP/1.1\r\nHost: local")
            let stalledBody = try RawConnection(port: port)
            stalledBody.send("POST /v1/customers/x/alias HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"al")
            let keptAlive = try RawConnection(port: port)
            keptAlive.send(Self.health)
            let answer = String(decoding: await keptAlive.receive(within: 5) ?? [], as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(await slowHeaders.closed(within: 5))
            #expect(await stalledBody.closed(within: 5))
            #expect(await keptAlive.closed(within: 5))
            // A client that keeps up is answered.
            let prompt = try RawConnection(port: port)
            prompt.send(Self.health)
            #expect(String(decoding: await prompt.receive(within: 5) ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("at the cap, a new connection closes the one idle longest and is answered: /health works while idle clients fill the server")
    func cap() async throws {
        let h = try await Harness.make(.sqlite)
        var limits = ConnectionLimits()
        limits.maxConnections = 4
        // Only the cap is under test: the idle connections never send a head, and on a loaded machine the rounds can
        // take longer than the default header timeout, which would close the last of them for another reason.
        limits.headerTimeout = .seconds(600)
        limits.idleTimeout = .seconds(600)
        try await h.application { $0.connections = limits }.test(.live) { client in
            let port = try #require(client.port)
            var idle: [RawConnection] = []
            for _ in 0..<4 {
                idle.append(try RawConnection(port: port))
                try await Task.sleep(for: .milliseconds(50))
            }
            var answered: [RawConnection] = []  // kept open (idle since their answer), so each round meets the cap
            for round in 0..<3 {
                let health = try RawConnection(port: port)
                answered.append(health)
                health.send(Self.health)
                #expect(String(decoding: await health.receive(within: 5) ?? [], as: UTF8.self).hasPrefix("HTTP/1.1 200"), "round \(round)")
            }
            // Each round the connection idle longest made room: the first three idle ones, not the last (idle since
            // after them) nor the answered ones (idle since their answers).
            for index in 0..<3 { #expect(await idle[index].closed(within: 2), "idle connection \(index)") }
            #expect(await !idle[3].closed(within: 0.3))
            #expect(answered.count == 3)
        }
        #expect(ConnectionLimits.automaticMaximum > 16)
        var tooMany = ConnectionLimits()
        tooMany.maxConnections = Int.max
        #expect(tooMany.effectiveMaximum == ConnectionLimits.automaticMaximum)
    }
}
