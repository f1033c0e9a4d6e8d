import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The limits every connection lives under, so that no client holds the server's connections or files:
/// - a request's head must arrive within `headerTimeout` of the connection opening (a slow client dribbling headers
///   is closed), and the next one within `idleTimeout` of the previous answer (an idle keep-alive connection is
///   closed);
/// - a body must keep coming: at most `bodyTimeout` between its parts;
/// - at most `maxConnections` at once (below the process's open-file limit, `RLIMIT_NOFILE`). A connection past it
///   closes the one idle longest (no request in flight: waiting for its first head or its next), so that `/health`
///   and real clients get in while idle or slow connections fill the server; when none is idle, the new one is closed.
/// No limit applies while the server works on a request or writes its answer.
public struct ConnectionLimits: Sendable, Equatable {
    public var headerTimeout: Duration = .seconds(10)
    public var bodyTimeout: Duration = .seconds(30)
    public var idleTimeout: Duration = .seconds(60)
    /// nil: as many as the open-file limit leaves room for (`automaticMaximum`).
    public var maxConnections: Int?

    public init() {}

    /// The open-file limit less what the database, logs and the process need: an eighth of it, at least 64.
    public static var automaticMaximum: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 65_536 }
        // RLIM_INFINITY is all ones: clamped to Int.max, then to a sane ceiling.
        let files = min(Int(clamping: limit.rlim_cur), 1 << 20)
        return max(16, files - max(64, files / 8))
    }

    /// The cap in force: the setting, never above `automaticMaximum`.
    public var effectiveMaximum: Int { min(maxConnections ?? Self.automaticMaximum, Self.automaticMaximum) }
}

/// The server's open connections, and which of them are idle since when; shared by every connection's guard.
final class ConnectionRegistry: Sendable {
    struct Entry {
        var channel: any Channel
        /// When it became idle (no request in flight); nil while a request is read or answered.
        var idleSince: NIODeadline?
    }

    let maximum: Int
    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    init(maximum: Int) { self.maximum = max(1, maximum) }

    var count: Int { entries.withLockedValue { $0.count } }

    /// Admits a new connection, closing the one idle longest when the cap is reached; false when none is idle.
    func admit(_ channel: any Channel) -> Bool {
        let evicted: (any Channel)?? = entries.withLockedValue { entries in
            var evicted: (any Channel)?
            if entries.count >= maximum {
                let idle = entries.compactMap { key, entry in entry.idleSince.map { (key: key, since: $0, channel: entry.channel) } }
                guard let oldest = idle.min(by: { $0.since < $1.since }) else { return .none }
                evicted = oldest.channel
                entries[oldest.key] = nil
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, idleSince: .now())
            return .some(evicted)
        }
        guard case .some(let closing) = evicted else { return false }
        closing?.close(promise: nil)
        return true
    }

    func setIdle(_ channel: any Channel, _ idle: Bool) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)]?.idleSince = idle ? .now() : nil }
    }

    func remove(_ channel: any Channel) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)] = nil }
    }
}

/// One connection's guard (after HTTP decoding, before Hummingbird's handling): its timers and its place in the
/// registry.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limits: ConnectionLimits
    let registry: ConnectionRegistry
    private var timer: Scheduled<Void>?
    private var registered = false
    /// A request's head has come and its answer is not written yet.
    private var answering = false

    init(limits: ConnectionLimits, registry: ConnectionRegistry) {
        self.limits = limits
        self.registry = registry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !registered else { return }
        registered = true
        guard registry.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        schedule(context, after: limits.headerTimeout)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        registry.remove(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        registry.remove(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            answering = true
            registry.setIdle(context.channel, false)
            schedule(context, after: limits.bodyTimeout)
        case .body:
            schedule(context, after: limits.bodyTimeout)
        case .end where answering:
            // The server works on it now: no limit until its answer is written.
            timer?.cancel()
            timer = nil
        case .end:
            // The rest of a body the server answered early (a 413): idle from here.
            schedule(context, after: limits.idleTimeout)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            answering = false
            registry.setIdle(context.channel, true)
            schedule(context, after: limits.idleTimeout)
        }
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext, after duration: Duration) {
        timer?.cancel()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(duration.wholeMilliseconds) * 1_000_000)) {
            channel.close(promise: nil)
        }
    }
}
