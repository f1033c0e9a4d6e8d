import Foundation
import Hummingbird

/// What every request context of the API shares: the 256 KB body limit, and JSON bodies decoded and encoded the
/// API's way (`JSONBodyDecoder`; sorted keys out).
public protocol APIRequestContext: RequestContext where Decoder == JSONBodyDecoder, Encoder == JSONEncoder {}

extension APIRequestContext {
    public var maxUploadSize: Int { ErrorResponse.maxBodyBytes }
    public var requestDecoder: JSONBodyDecoder { JSONBodyDecoder() }
    public var responseEncoder: JSONEncoder { .sortedKeys }
}
