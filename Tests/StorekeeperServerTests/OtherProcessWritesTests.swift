import Dispatch
import Testing

@testable import StorekeeperCore

/// `OtherProcessWrites`: when cached customers may outlive the TTL.
@Suite("Cache: other processes' writes")
struct OtherProcessWritesTests {
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    @Test("vouches only after a check, for what was read after the last check that saw a change, while checks are current")
    func vouching() async throws {
        let watch = OtherProcessWrites(ttl: .milliseconds(300))
        let before = Self.now
        #expect(!watch.vouches(for: before), "no check yet")
        watch.observe(version: 1, began: Self.now, ended: Self.now)
        // The first check vouches only for reads after it.
        #expect(!watch.vouches(for: before))
        let afterFirst = Self.now
        #expect(watch.vouches(for: afterFirst))
        // The same version: nothing changed, older reads stay vouched for.
        watch.observe(version: 1, began: Self.now, ended: Self.now)
        #expect(watch.vouches(for: afterFirst))
        // Another process committed: reads before the check that saw it are not vouched for, even one remembered later.
        let readBeforeTheChange = Self.now
        watch.observe(version: 2, began: Self.now, ended: Self.now)
        #expect(!watch.vouches(for: afterFirst))
        #expect(!watch.vouches(for: readBeforeTheChange))
        let afterChange = Self.now
        #expect(watch.vouches(for: afterChange))
        // A watch that stopped checking vouches for nothing once its last check is older than the TTL.
        try await Task.sleep(for: .milliseconds(400))
        #expect(!watch.vouches(for: afterChange))
    }
}
