import Foundation
import Storage

extension StorekeeperCore {
    /// A new app and its first keys. The keys are shown here once; only their hashes are stored.
    public struct CreatedApp: Codable, Sendable {
        public var appId: String
        public var publicKey: String
        public var secretKey: String
    }

    public func createApp(_ config: AppConfiguration) async throws -> CreatedApp {
        try config.validate()
        let appId = APIKeys.appId()
        let publicKey = APIKeys.generate(kind: "pk")
        let secretKey = APIKeys.generate(kind: "sk")
        let json = String(decoding: try JSONEncoder.api.encode(config), as: UTF8.self)
        let now = ingestion.nowMs
        try await database.writing { session in
            try await session.insertApp(AppRecord(id: appId, bundleId: config.bundleId, config: json, createdAt: now, updatedAt: now))
            try await session.insertKey(APIKeyRecord(keyId: publicKey.id, appId: appId, kind: .public, secretHash: publicKey.secretHash, createdAt: now))
            try await session.insertKey(APIKeyRecord(keyId: secretKey.id, appId: appId, kind: .secret, secretHash: secretKey.secretHash, createdAt: now))
        }
        return CreatedApp(appId: appId, publicKey: publicKey.key, secretKey: secretKey.key)
    }
}
