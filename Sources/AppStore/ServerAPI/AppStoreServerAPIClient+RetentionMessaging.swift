#if Server
    import Foundation

    /// The Retention Messaging API: images and messages shown on the subscription's cancellation screen, the default
    /// message per product and locale, the URL of the developer's Get Retention Message endpoint, and Apple's
    /// performance test of that endpoint. Messages are checked against Apple's limits before they are sent.
    extension AppStoreServerAPIClient {
        /// Upload Image: a PNG for messages (`FULL_SIZE`, or `BULLET_POINT` for a bullet's icon).
        public func uploadRetentionImage(identifier: UUID, png: [UInt8], size: ImageSize? = nil) async throws(AppStoreServerAPIError) {
            guard png.starts(with: Self.pngSignature) else {
                throw AppStoreServerAPIError(kind: .invalidRequest, httpStatus: nil, message: "image: is not a PNG file")
            }
            if let size, !size.isKnown {
                throw AppStoreServerAPIError(
                    kind: .invalidRequest, httpStatus: nil, message: "imageSize: '\(size.rawValue)' is not FULL_SIZE or BULLET_POINT")
            }
            let _: Empty = try await call(
                .PUT, "/inApps/v1/messaging/image/\(Self.lowercased(identifier))", query: size.map { [("imageSize", $0.rawValue)] } ?? [],
                bytes: png, contentType: "image/png")
        }

        /// Delete Image.
        public func deleteRetentionImage(identifier: UUID) async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(.DELETE, "/inApps/v1/messaging/image/\(Self.lowercased(identifier))")
        }

        /// Get Image List: every uploaded image and its review state.
        public func retentionImages() async throws(AppStoreServerAPIError) -> [RetentionImage] {
            let response: GetImageListResponse = try await call(.GET, "/inApps/v1/messaging/image/list")
            return response.imageIdentifiers ?? []
        }

        /// Upload Message: refused before the call when a field is over Apple's limit (header 66 characters, body 144,
        /// alt text 150, five bullet points of 66), with the field named.
        public func uploadRetentionMessage(identifier: UUID, _ message: UploadMessageRequestBody) async throws(AppStoreServerAPIError) {
            do {
                try message.validate()
            } catch {
                throw AppStoreServerAPIError(kind: .invalidRequest, httpStatus: nil, message: error.description)
            }
            let _: Empty = try await call(.PUT, "/inApps/v1/messaging/message/\(Self.lowercased(identifier))", body: message)
        }

        /// Delete Message.
        public func deleteRetentionMessage(identifier: UUID) async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(.DELETE, "/inApps/v1/messaging/message/\(Self.lowercased(identifier))")
        }

        /// Get Message List: every uploaded message and its review state.
        public func retentionMessages() async throws(AppStoreServerAPIError) -> [RetentionMessage] {
            let response: GetMessageListResponse = try await call(.GET, "/inApps/v1/messaging/message/list")
            return response.messageIdentifiers ?? []
        }

        /// Configure Default Message: the approved message Apple shows for a product in a locale when the real-time
        /// endpoint does not answer in time or answers with none.
        public func configureDefaultRetentionMessage(productId: String, locale: String, messageIdentifier: UUID)
            async throws(AppStoreServerAPIError)
        {
            let _: Empty = try await call(
                .PUT, try defaultPath(productId, locale), body: DefaultConfiguration(messageIdentifier: Self.lowercased(messageIdentifier)))
        }

        /// Delete Default Message.
        public func deleteDefaultRetentionMessage(productId: String, locale: String) async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(.DELETE, try defaultPath(productId, locale))
        }

        /// Get Default Message: the message configured for the product and locale (Apple's 4040020 when none is).
        public func defaultRetentionMessage(productId: String, locale: String) async throws(AppStoreServerAPIError) -> String? {
            let response: DefaultConfiguration = try await call(.GET, try defaultPath(productId, locale))
            return response.messageIdentifier
        }

        /// Configure Realtime URL: where Apple asks for a message when a customer is about to cancel (at most 256
        /// characters, https in production).
        public func configureRealtimeURL(_ url: String) async throws(AppStoreServerAPIError) {
            guard !url.isEmpty, url.unicodeScalars.count <= 256, let parsed = URL(string: url), parsed.host != nil,
                ["http", "https"].contains(parsed.scheme?.lowercased() ?? "")
            else {
                throw AppStoreServerAPIError(
                    kind: .invalidRequest, httpStatus: nil, message: "realtimeURL: is not an http(s) URL of at most 256 characters")
            }
            let _: Empty = try await call(.PUT, "/inApps/v1/messaging/realtime/url", body: RealtimeURLBody(realtimeURL: url))
        }

        /// Delete Realtime URL.
        public func deleteRealtimeURL() async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(.DELETE, "/inApps/v1/messaging/realtime/url")
        }

        /// Get Realtime URL.
        public func realtimeURL() async throws(AppStoreServerAPIError) -> String? {
            let response: RealtimeURLBody = try await call(.GET, "/inApps/v1/messaging/realtime/url")
            return response.realtimeURL
        }

        /// Initiate Performance Test: Apple calls the configured endpoint about the given subscription, many times.
        public func startRetentionPerformanceTest(originalTransactionId: String) async throws(AppStoreServerAPIError)
            -> PerformanceTestStarted
        {
            try await call(
                .POST, "/inApps/v1/messaging/performanceTest", body: PerformanceTestRequest(originalTransactionId: originalTransactionId))
        }

        /// Get Performance Test Results.
        public func retentionPerformanceTestResult(requestId: String) async throws(AppStoreServerAPIError) -> PerformanceTestResult {
            try await call(.GET, "/inApps/v1/messaging/performanceTest/result/\(try segment(requestId))")
        }

        private func defaultPath(_ productId: String, _ locale: String) throws(AppStoreServerAPIError) -> String {
            "/inApps/v1/messaging/default/\(try segment(productId))/\(try segment(locale))"
        }

        private static func lowercased(_ id: UUID) -> String { id.uuidString.lowercased() }

        /// The eight bytes every PNG file starts with.
        static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    }
#endif
