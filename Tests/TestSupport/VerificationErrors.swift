import AppStore

/// The `VerificationError` a body throws, or nil if it throws none (or another kind).
public func verificationError<T>(_ body: () async throws -> T) async -> VerificationError? {
    do {
        _ = try await body()
        return nil
    } catch let error as VerificationError {
        return error
    } catch {
        return nil
    }
}
