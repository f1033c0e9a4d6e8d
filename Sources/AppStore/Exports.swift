// The models are this library's vocabulary: whoever imports `AppStore` to verify signed data gets the types it decodes to.
@_exported import AppStoreModels
