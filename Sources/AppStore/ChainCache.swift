import Crypto
import Foundation
import Synchronization

/// A bounded cache of certificate chains that have been verified to a trust store.
///
/// A hit returns the leaf's P-256 key, so that a JWS signed by a known chain costs one signature verification.
/// The cache never stretches trust in time: every certificate's validity window is checked against each call's
/// validation time, and a call outside any window is a miss that goes through full verification again. When OCSP
/// checking is on, an entry also ages out after the configured lifetime.
///
/// One cache may be shared by several verifiers: entries are keyed by the trust store as well as the DER bytes.
public final class ChainCache: Sendable {
    struct Key: Hashable, Sendable {
        var trustStore: [UInt8]
        var leaf: [UInt8]
        var intermediate: [UInt8]

        /// Hashes the bytes in bulk: the synthesised conformance would feed the hasher one byte at a time.
        func hash(into hasher: inout Hasher) {
            Self.combine(trustStore, into: &hasher)
            Self.combine(leaf, into: &hasher)
            Self.combine(intermediate, into: &hasher)
        }

        static func combine(_ bytes: [UInt8], into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// A header's base64url text, hashed in bulk.
    struct HeaderKey: Hashable, Sendable {
        var bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            Key.combine(bytes, into: &hasher)
        }
    }

    struct Entry: Sendable {
        var leafKey: P256.Signing.PublicKey
        /// The validity window of each certificate of the verified chain.
        var validity: [ClosedRange<Date>]
        /// When OCSP last confirmed the chain, if it was checked.
        var revocationCheckedAt: Date?
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Parsed JWS headers by their base64url text: a pure memo of parsing, bounded like the chains.
        var headers: [HeaderKey: DecodedHeader] = [:]
        var tick: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    public let capacity: Int
    private let state = Mutex(State())
    static let maxMemoisedHeaderBytes = 16 * 1024

    /// - Parameter capacity: the most chains kept; the least recently used one is dropped first. Apple signs with a
    ///   handful of leaf certificates at a time, so the default leaves ample room.
    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { state.withLock { $0.entries.count } }

    /// How many lookups found a usable entry, and how many did not.
    public var statistics: Statistics { state.withLock { Statistics(hits: $0.hits, misses: $0.misses) } }

    /// Lookups that found a usable entry, and those that did not.
    public struct Statistics: Sendable, Hashable {
        public var hits: Int
        public var misses: Int
    }

    public func removeAll() {
        state.withLock {
            $0.entries.removeAll()
            $0.headers.removeAll()
        }
    }

    /// The header parsed from `segment`, parsing and remembering it if it is new.
    func header(_ segment: ArraySlice<UInt8>, decoder: JSONDecoder) throws(VerificationError) -> DecodedHeader {
        let key = HeaderKey(bytes: Array(segment))
        if let known = state.withLock({ $0.headers[key] }) { return known }
        let header = try DecodedHeader(segment: segment, decoder: decoder)
        // Apple's headers are a few kilobytes; larger ones are parsed every time rather than held.
        guard segment.count <= Self.maxMemoisedHeaderBytes else { return header }
        state.withLock { state in
            // Apple signs with a handful of leaves at a time; when the memo is full, start it afresh.
            if state.headers.count >= capacity { state.headers.removeAll(keepingCapacity: true) }
            state.headers[key] = header
        }
        return header
    }

    /// The leaf key of a chain verified earlier, if every certificate is valid at `validationTime` and, when
    /// `revocationLifetime` is given, the revocation check is younger than that at `now`.
    func leafKey(for key: Key, at validationTime: Date, now: Date, revocationLifetime: TimeInterval?) -> P256.Signing.PublicKey? {
        state.withLock { state in
            guard var entry = state.entries[key],
                entry.validity.allSatisfy({ $0.contains(validationTime) })
            else {
                state.misses += 1
                return nil
            }
            if let revocationLifetime {
                guard let checkedAt = entry.revocationCheckedAt, now.timeIntervalSince(checkedAt) < revocationLifetime,
                    checkedAt <= now
                else {
                    state.misses += 1
                    return nil
                }
            }
            state.tick &+= 1
            entry.lastUse = state.tick
            state.entries[key] = entry
            state.hits += 1
            return entry.leafKey
        }
    }

    func insert(_ key: Key, leafKey: P256.Signing.PublicKey, validity: [ClosedRange<Date>], revocationCheckedAt: Date?) {
        state.withLock { state in
            state.tick &+= 1
            if state.entries[key] == nil, state.entries.count >= capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries.removeValue(forKey: oldest)
            }
            state.entries[key] = Entry(
                leafKey: leafKey, validity: validity, revocationCheckedAt: revocationCheckedAt, lastUse: state.tick)
        }
    }
}
