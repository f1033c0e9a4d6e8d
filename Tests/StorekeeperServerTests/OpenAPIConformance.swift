import Experiments
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import Yams

@testable import StorekeeperServer

/// Checks answers against the OpenAPI document as served (its YAML, read back): the status must be documented for
/// the operation, and a JSON body must fit the documented schema. A small JSON Schema checker for what the document
/// uses: type (with null), properties, required, additionalProperties, items, enum, minLength, maxLength, pattern,
/// minimum, maximum, minItems, oneOf and local $ref. JSON values are the project's `JSONValue`.
struct OpenAPIConformance: Sendable {
    /// The parsed document. `@unchecked`: never mutated after `init`, and only read.
    struct Document: @unchecked Sendable { let root: [String: Any] }
    let document: Document

    static let shared: OpenAPIConformance = {
        do {
            guard let root = try Yams.load(yaml: OpenAPIDocument.yaml) as? [String: Any] else {
                preconditionFailure("the served document is not a YAML mapping")
            }
            return OpenAPIConformance(document: Document(root: root))
        } catch {
            preconditionFailure("the served document is not YAML: \(error)")
        }
    }()

    /// The document's path template for a request path, if any.
    func template(for path: String) -> String? {
        let paths = document.root["paths"] as? [String: Any] ?? [:]
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return paths.keys.sorted().first { template in
            let parts = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            return parts.count == segments.count
                && zip(parts, segments).allSatisfy { $0.hasPrefix("{") ? !$1.isEmpty : $0 == $1 }
        }
    }

    /// What is wrong with an answer to `method uri`, by the document.
    func problems(method: HTTPRequest.Method, uri: String, response: TestResponse) -> [String] {
        let path = String(uri.prefix { $0 != "?" })
        guard let template = template(for: path),
            let item = (document.root["paths"] as? [String: Any])?[template] as? [String: Any]
        else { return [] }  // not a documented path: the router's 404
        guard let operation = item[method.rawValue.lowercased()] as? [String: Any] else {
            return response.status == .methodNotAllowed ? [] : ["\(method) \(template) answered \(response.status.code), not 405"]
        }
        let responses = operation["responses"] as? [String: Any] ?? [:]
        guard let documented = responses[String(response.status.code)] as? [String: Any] else {
            return ["\(method) \(template): status \(response.status.code) is not documented"]
        }
        let resolved = resolve(documented)
        let place = "\(method) \(template) \(response.status.code)"
        var problems: [String] = []
        for (name, header) in resolved["headers"] as? [String: Any] ?? [:]
        where (resolve(header as? [String: Any] ?? [:])["required"] as? Bool) == true
            && response.headers[values: HTTPField.Name(name) ?? .contentType].isEmpty
        {
            problems.append("\(place): the required header \(name) is missing")
        }
        guard let content = resolved["content"] as? [String: Any] else { return problems }
        // The answer's media type must be one the document lists; a JSON body must fit its schema.
        let mediaType = String((response.headers[.contentType] ?? "").prefix { $0 != ";" })
        guard let documentedMedia = content[mediaType] as? [String: Any] else {
            return problems + ["\(place): content type \(mediaType.isEmpty ? "none" : mediaType), documented \(content.keys.sorted())"]
        }
        guard mediaType == "application/json", let schema = documentedMedia["schema"] as? [String: Any] else { return problems }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
        } catch {
            return problems + ["\(place): the body is not JSON"]
        }
        return problems + check(value, schema, at: place + " $")
    }

    func resolve(_ object: [String: Any]) -> [String: Any] {
        guard let ref = object["$ref"] as? String, ref.hasPrefix("#/") else { return object }
        var node: Any? = document.root
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] }
        return resolve(node as? [String: Any] ?? [:])
    }

    func check(_ value: JSONValue, _ raw: [String: Any], at path: String) -> [String] {
        let schema = resolve(raw)
        var problems: [String] = []
        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }) {
            let matches = types.contains { type in
                switch (type, value) {
                case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array),
                    ("object", .object):
                    return true
                // JSON Schema's integer: a number without a fraction.
                case ("integer", .number(let n)): return n.rounded() == n
                default: return false
                }
            }
            if !matches { return ["\(path): \(value) is not \(types.joined(separator: " or "))"] }
        }
        if let allowed = schema["enum"] as? [Any], case .string(let s) = value, !allowed.contains(where: { ($0 as? String) == s }) {
            problems.append("\(path): '\(s)' is not one of \(allowed)")
        }
        if let options = schema["oneOf"] as? [[String: Any]] {
            let passing = options.filter { check(value, $0, at: path).isEmpty }.count
            if passing != 1 { problems.append("\(path): matches \(passing) of oneOf's \(options.count)") }
        }
        switch value {
        case .string(let s):
            let count = s.unicodeScalars.count
            if let min = schema["minLength"] as? Int, count < min { problems.append("\(path): shorter than \(min)") }
            if let max = schema["maxLength"] as? Int, count > max { problems.append("\(path): longer than \(max)") }
            if let pattern = schema["pattern"] as? String, s.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(s)' does not match \(pattern)")
            }
        case .number(let n):
            if let min = schema["minimum"] as? Int, n < Double(min) { problems.append("\(path): below \(min)") }
            if let max = schema["maximum"] as? Int, n > Double(max) { problems.append("\(path): above \(max)") }
        case .array(let items):
            if let min = schema["minItems"] as? Int, items.count < min { problems.append("\(path): fewer than \(min) items") }
            if let itemSchema = schema["items"] as? [String: Any] {
                for (index, item) in items.enumerated() { problems += check(item, itemSchema, at: "\(path)[\(index)]") }
            }
        case .object(let members):
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where members[name] == nil {
                problems.append("\(path): '\(name)' is required")
            }
            for (name, member) in members {
                if let property = properties[name] as? [String: Any] {
                    problems += check(member, property, at: "\(path).\(name)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): '\(name)' is not allowed")
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    problems += check(member, additional, at: "\(path).\(name)")
                }
            }
        default: break
        }
        return problems
    }
}

/// A test client that records an issue for every answer the OpenAPI document does not describe.
struct ConformingClient: TestClientProtocol {
    let base: any TestClientProtocol
    var port: Int? { base.port }

    func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        let response = try await base.executeRequest(uri: uri, method: method, headers: headers, body: body)
        for problem in OpenAPIConformance.shared.problems(method: method, uri: uri, response: response) {
            Issue.record("the answer does not fit the OpenAPI document: \(problem)")
        }
        return response
    }
}
