import Experiments
import Foundation

/// The groups of a split test: a `String` enum whose raw values are the experiment's variant keys.
///
/// ```swift
/// enum Group: String, SplitTestGroup { case control, red, blue }
/// ```
public protocol SplitTestGroup: RawRepresentable, CaseIterable, Sendable, Hashable where RawValue == String {
    /// The group for everyone outside the test, and for a variant this enum does not know: by default the case whose
    /// raw value is `control`, or the first case.
    static var fallbackGroup: Self { get }
}

extension SplitTestGroup {
    /// The case whose raw value is `control`, or else the first case.
    public static var fallbackGroup: Self {
        if let control = Self(rawValue: "control") { return control }
        guard let first = allCases.first else { preconditionFailure("a split test's Group enum needs at least one case") }
        return first
    }
}

/// A split test as a type: its experiment's key and its groups.
///
/// ```swift
/// enum ButtonColorTest: SplitTest {
///     static let identifier = "button-color"
///     enum Group: String, SplitTestGroup { case control, red, blue }
/// }
/// ```
public protocol SplitTest {
    associatedtype Group: SplitTestGroup
    /// The experiment's key on the server.
    static var identifier: String { get }
}

/// Where an app sends exposures itself (e.g. Amplitude's `setOnce`), instead of the server's exposures endpoint.
public protocol SplitTestAnalytics: Sendable {
    func recordExposure(test: String, group: String, phase: Int) async throws
}

/// Where groups and exposures are kept across launches, so that a group is sticky and an exposure recorded once.
public protocol SplitTestStorage: Sendable {
    func assignment(test: String) -> StoredSplitTestAssignment?
    func store(_ assignment: StoredSplitTestAssignment, test: String)
    func wasExposed(test: String, phase: Int) -> Bool
    func markExposed(test: String, phase: Int)
}

/// A group as last decided, for the next launch.
public struct StoredSplitTestAssignment: Sendable, Codable, Hashable {
    /// The variant key, as the server names it.
    public var variant: String
    /// The experiment's phase it was decided in.
    public var phase: Int
    /// Whether the customer was in the running experiment.
    public var inExperiment: Bool
    /// The placement the test runs at.
    public var placement: String
    /// The customer it was decided for (a log-in starts over).
    public var appUserId: String

    /// An assignment to keep.
    public init(variant: String, phase: Int, inExperiment: Bool, placement: String, appUserId: String) {
        self.variant = variant
        self.phase = phase
        self.inExperiment = inExperiment
        self.placement = placement
        self.appUserId = appUserId
    }
}

/// The default `SplitTestStorage`: one JSON document in the SDK's key-value storage.
public final class DefaultSplitTestStorage: SplitTestStorage {
    struct Document: Codable {
        var assignments: [String: StoredSplitTestAssignment] = [:]
        var exposed: Set<String> = []
    }

    private let storage: any KeyValueStorage
    private let document: Locked<Document>

    /// Storage in the SDK's key-value storage.
    public init(storage: any KeyValueStorage) {
        self.storage = storage
        let stored = storage.data(forKey: StorageKeys.splitTests).flatMap { try? JSONDecoder().decode(Document.self, from: $0) }
        self.document = Locked(stored ?? Document())
    }

    /// The group last decided for the test, if any.
    public func assignment(test: String) -> StoredSplitTestAssignment? { document.withLock { $0.assignments[test] } }

    /// Keeps the group decided for the test.
    public func store(_ assignment: StoredSplitTestAssignment, test: String) {
        save { $0.assignments[test] = assignment }
    }

    /// Whether the customer's exposure in this phase was recorded already.
    public func wasExposed(test: String, phase: Int) -> Bool { document.withLock { $0.exposed.contains("\(test)#\(phase)") } }

    /// Remembers that the exposure in this phase was recorded.
    public func markExposed(test: String, phase: Int) {
        save { _ = $0.exposed.insert("\(test)#\(phase)") }
    }

    private func save(_ change: (inout Document) -> Void) {
        let data = document.withLock { document -> Data? in
            change(&document)
            return try? JSONEncoder().encode(document)
        }
        // A failed write loses stickiness for one launch at worst; the server keeps the assignment anyway.
        try? storage.set(data, forKey: StorageKeys.splitTests)
    }
}

/// A split test's group for this customer.
public struct SplitTestAssignment<Test: SplitTest>: Sendable {
    /// Who decided the group.
    public enum Source: String, Sendable {
        /// The server (the normal case: it can stop or roll back the test remotely).
        case server
        /// The group stored on this device from an earlier answer (the server could not be reached).
        case stored
        /// This device, with the same hash as the server, from the cached definitions (never answered before).
        case local
        /// Nothing was known: the control.
        case fallback
    }

    /// The customer's group.
    public let group: Test.Group
    /// The variant key as the server names it (differs from `group.rawValue` when the enum does not know it).
    public let variant: String
    /// The experiment's phase the group was decided in.
    public let phase: Int
    /// Whether the customer is in the running experiment; outside it, `hit()` records nothing.
    public let inExperiment: Bool
    /// Who decided the group.
    public let source: Source
    let placement: String
    let recorder: @Sendable (_ test: String, _ variant: String, _ phase: Int, _ placement: String) async -> Void

    /// Records that the customer saw the test's group: once per customer and phase, across launches.
    public func hit() async {
        guard inExperiment else { return }
        await recorder(Test.identifier, variant, phase, placement)
    }
}
