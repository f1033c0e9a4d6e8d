import Foundation

/// The App Store environment that produced a piece of data.
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct Environment: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production = Self(rawValue: "Production")
    public static let sandbox = Self(rawValue: "Sandbox")
    public static let xcode = Self(rawValue: "Xcode")
    public static let localTesting = Self(rawValue: "LocalTesting")

    public static let known: [Self] = [.production, .sandbox, .xcode, .localTesting]

    /// The known environment a person spelled in any case (`sandbox`, `SANDBOX`, `Sandbox`), in Apple's spelling; nil
    /// for another word. Input is read this way everywhere; output is always Apple's spelling.
    public static func known(spelled text: String) -> Self? {
        known.first { $0.rawValue.caseInsensitiveCompare(text) == .orderedSame }
    }
}
