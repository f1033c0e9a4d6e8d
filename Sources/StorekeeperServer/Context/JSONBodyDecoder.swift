import AppStore
import Experiments
import Foundation
import Hummingbird
import NIOCore
import StorekeeperCore

/// Decodes JSON request bodies: at most 256 KB (413 past that) and 64 levels of arrays and objects (checked before
/// decoding), and a body that does not decode is invalid input naming the field at fault.
public struct JSONBodyDecoder: RequestDecoder {
    /// One shared decoder (building one per request costs more than decoding a small body).
    private static let decoder = JSONDecoder()
    static let maxDepth = 64

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: ErrorResponse.maxBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw ErrorResponse.payloadTooLarge
        }
        let data = Data(buffer.readableBytesView)
        guard !JSONValue.nests(data, deeperThan: Self.maxDepth) else {
            throw CoreError.invalidInput("the body nests arrays and objects more than \(Self.maxDepth) deep")
        }
        do {
            return try Self.decoder.decode(T.self, from: data)
        } catch let error as CoreError {
            throw error
        } catch {
            // Not JSON at all: say where it stopped. JSON of the wrong shape: say which field.
            if case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let syntax = DecodingErrorDescription.syntaxError(in: data)
            {
                throw CoreError.invalidInput("the body is not valid JSON: \(syntax)")
            }
            throw CoreError.invalidInput(
                field: DecodingErrorDescription.field(of: error),
                "the body does not fit this endpoint: \(DecodingErrorDescription.describe(error))")
        }
    }
}
