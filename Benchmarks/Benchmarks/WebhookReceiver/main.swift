import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

// A fast local webhook receiver for `outbox.sh`: answers every POST 204 at once and counts the distinct webhook-ids
// (and all requests); GET /count answers "<distinct> <requests>". Prints its port on stdout.
//
//   WebhookReceiver [port]

final class Counts: Sendable {
    private struct State {
        var ids = Set<String>()
        var requests = 0
    }
    private let state = Mutex(State())

    func record(_ id: String?) {
        state.withLock {
            $0.requests += 1
            if let id { $0.ids.insert(id) }
        }
    }

    var text: String { state.withLock { "\($0.ids.count) \($0.requests)" } }
}

let counts = Counts()
let router = Router()
let webhookId = HTTPField.Name("webhook-id")
router.post("/") { request, _ -> Response in
    counts.record(webhookId.flatMap { request.headers[$0] })
    return Response(status: .noContent)
}
router.get("/count") { _, _ -> String in counts.text }
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 0
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in
        FileHandle.standardOutput.write(Data("receiver listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n".utf8))
    })
try await app.runService()
