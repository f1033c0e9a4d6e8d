import AppStore
import Foundation
import Testing

@Suite("Decoding error descriptions")
struct DecodingErrorDescriptionTests {
    struct Item: Decodable { var id: String }
    struct Body: Decodable { var items: [Item] }

    func error(_ json: String) -> any Error {
        do {
            _ = try JSONDecoder().decode(Body.self, from: Data(json.utf8))
            return CancellationError()
        } catch {
            return error
        }
    }

    @Test("the field at fault is named: a wrong type, a missing key; none for text that is not JSON")
    func fields() {
        #expect(DecodingErrorDescription.field(of: error(#"{"items": [{"id": "a"}, {"id": 2}]}"#)) == "items.[1].id")
        #expect(DecodingErrorDescription.describe(error(#"{"items": [{"id": "a"}, {"id": 2}]}"#)) == "'items.[1].id' is not a String")
        #expect(DecodingErrorDescription.field(of: error(#"{"items": [{}]}"#)) == "items.[0].id")
        #expect(DecodingErrorDescription.field(of: error(#"{}"#)) == "items")
        #expect(DecodingErrorDescription.field(of: error("not json")) == nil)
        #expect(DecodingErrorDescription.field(of: CancellationError()) == nil)
    }
}
