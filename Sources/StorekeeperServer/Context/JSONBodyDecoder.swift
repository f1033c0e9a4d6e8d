import AppStore
import Foundation
import Hummingbird
import NIOCore
import StorekeeperCore

/// Decodes JSON request bodies: at most 256 KB (413 past that), and a body that does not decode is invalid input
/// naming the field at fault.
public struct JSONBodyDecoder: RequestDecoder {
    /// One shared decoder (building one per request costs more than decoding a small body).
    private static let decoder = JSONDecoder()

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: ErrorResponse.maxBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw ErrorResponse.payloadTooLarge
        }
        do {
            return try Self.decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as StorekeeperError {
            throw error
        } catch {
            throw StorekeeperError.invalidInput(
                field: Self.field(of: error),
                "the body is not valid JSON for this endpoint: \(DecodingErrorDescription.describe(error))")
        }
    }

    /// The path of the value at fault, when the decoder names one.
    static func field(of error: any Error) -> String? {
        guard let error = error as? DecodingError else { return nil }
        let context: DecodingError.Context
        var last: String?
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): context = c
        case .keyNotFound(let key, let c):
            context = c
            last = key.stringValue
        @unknown default: return nil
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } + (last.map { [$0] } ?? [])
        return path.isEmpty ? nil : path.joined(separator: ".")
    }
}
