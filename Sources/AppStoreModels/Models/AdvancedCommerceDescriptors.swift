/// The display name and description of an Advanced Commerce purchase.
public struct AdvancedCommerceDescriptors: Codable, Hashable, Sendable {
    public var description: String?
    public var displayName: String?

    public init() {}
}
