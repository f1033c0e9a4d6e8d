#if canImport(Security)
    import Foundation
    import Security

    /// The Keychain as a `KeyValueStorage` (generic passwords of one service, readable after the first unlock): where the
    /// SDK keeps the anonymous app user id on Apple platforms, so that it outlives the app's files. Built on Apple
    /// platforms only.
    public struct KeychainStorage: KeyValueStorage {
        /// The Keychain service the items are kept under.
        public let service: String

        /// Storage in the Keychain items of `service`.
        public init(service: String = "storekeeper") {
            self.service = service
        }

        private func query(_ key: String) -> [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: key]
        }

        /// The item's data, or nil when there is none.
        public func data(forKey key: String) -> Data? {
            var query = query(key)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
            return result as? Data
        }

        /// The Keychain refused a write.
        public struct KeychainError: Error, CustomStringConvertible {
            /// What `SecItemAdd`, `SecItemUpdate` or `SecItemDelete` answered.
            public var status: OSStatus
            /// The status in words.
            public var description: String { "the Keychain answered \(status)" }
        }

        /// Adds or updates the item (readable after the first unlock), or deletes it for nil.
        public func set(_ data: Data?, forKey key: String) throws {
            let query = query(key)
            guard let data else {
                let status = SecItemDelete(query as CFDictionary)
                guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
                return
            }
            let update = [kSecValueData as String: data] as CFDictionary
            var status = SecItemUpdate(query as CFDictionary, update)
            if status == errSecItemNotFound {
                var add = query
                add[kSecValueData as String] = data
                add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
                status = SecItemAdd(add as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw KeychainError(status: status) }
        }
    }
#endif
