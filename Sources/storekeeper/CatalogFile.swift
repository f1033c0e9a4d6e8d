import AppStore
import Entitlements
import Foundation

/// A catalog file given on the command line (`apps create`, `entitlements`, `simulate`), read as a person wrote it: an
/// unknown field is refused (`WrittenCatalog`), and every command tells what is wrong the same way.
enum CatalogFile {
    /// Why a catalog file was refused: its path and the field at fault.
    struct Invalid: Error {
        let message: String
    }

    static func parse(_ data: Data, path: String) throws(Invalid) -> Catalog {
        do {
            return try JSONDecoder().decode(WrittenCatalog.self, from: data).catalog
        } catch {
            throw Invalid(message: "\(path): \(DecodingErrorDescription.describe(error))")
        }
    }
}
