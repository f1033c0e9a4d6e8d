// The few UIKit classes StoreKit's interface names, transcribed from the same SDK as StoreKit.swift (iPhoneOS26.0.sdk,
// UIKit): main-actor classes, so values of them cross into StoreKit's @MainActor calls as they do on a device.
// Only what the StoreKit adapter's type-check needs; bodies are never run.

@MainActor open class UIResponder {
    public init() {}
}

@MainActor open class UIScene: UIResponder {}

@MainActor open class UIWindowScene: UIScene {}

@MainActor open class UIViewController: UIResponder {}
