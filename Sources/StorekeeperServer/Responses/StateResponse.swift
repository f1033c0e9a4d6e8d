import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StorekeeperCore

/// A customer's state as the customer API answers: the state's JSON with `appUserId`, `appId`, `appAccountToken`,
/// `environment`, `environments` (what the answer covers) and `requestDate` (server time) in front (and `transferred` after a post that moved purchases from
/// another customer), an ETag of the state, and a Cache-Control that never outlives `nextChangeAt`. The stored JSON is
/// sent as it is, never decoded and encoded again.
struct StateResponse {
    var snapshot: StateSnapshot
    var appUserId: String
    var appId: String
    /// The UUID the SDK gives StoreKit's purchase option for this app user id.
    var appAccountToken: String
    /// What the answer covers: one environment, or every environment of the app.
    var view: StateView
    var requestDate: Int64
    /// Whether the post moved purchases from another named customer (the app's `transfer` policy).
    var transferred: Bool? = nil

    func response(to request: Request) -> Response {
        var maxAge: Int64 = 60
        if let next = snapshot.nextChangeAt { maxAge = min(maxAge, max(0, (next - requestDate) / 1000)) }
        var headers: HTTPFields = [:]
        headers[.eTag] = snapshot.etag
        headers[.cacheControl] = maxAge > 0 ? "private, max-age=\(maxAge)" : "private, no-cache"
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == snapshot.etag || tag == "*"
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        var body: [UInt8] = []
        body.reserveCapacity(snapshot.json.count + 128)
        body += Array("{\"appUserId\":".utf8)
        body += Self.jsonString(appUserId)
        body += Array(",\"appId\":".utf8)
        body += Self.jsonString(appId)
        body += Array(",\"appAccountToken\":\"\(appAccountToken)\"".utf8)
        body += Array(",\"environment\":".utf8)
        body += Self.jsonString(view.environment.rawValue)
        body += Array(",\"environments\":[".utf8)
        for (index, environment) in view.environments.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += Self.jsonString(environment.rawValue)
        }
        body += Array("],\"requestDate\":\(requestDate)".utf8)
        if let transferred { body += Array(",\"transferred\":\(transferred)".utf8) }
        if snapshot.json.count > 2 {
            body.append(UInt8(ascii: ","))
            body += snapshot.json.dropFirst()
        } else {
            body.append(UInt8(ascii: "}"))
        }
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A string as a JSON string literal: as it is, quoted, when it holds nothing JSON escapes (letters, digits and
    /// `$ : . - _`, which is every environment and most ids), else as the encoder writes it.
    private static func jsonString(_ text: String) -> [UInt8] {
        let utf8 = text.utf8
        if utf8.allSatisfy(isPlain) {
            var quoted: [UInt8] = [UInt8(ascii: "\"")]
            quoted.reserveCapacity(utf8.count + 2)
            quoted += utf8
            quoted.append(UInt8(ascii: "\""))
            return quoted
        }
        return (try? JSONEncoder.sortedKeys.encode(text)).map(Array.init) ?? Array("\"\"".utf8)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "$"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}
