import Crypto
import Foundation
import SwiftASN1
import X509

/// Why a simulator state folder could not be used.
public struct SimulatorStateError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension SimulatorCA {
    /// The files of a CA in a state folder: the three certificates (DER) and the leaf's signing key (PEM). The root
    /// and intermediate keys are not kept: a CA is never extended, only replaced.
    public enum StateFile {
        public static let root = "root.der"
        public static let intermediate = "intermediate.der"
        public static let leaf = "leaf.der"
        public static let leafKey = "leaf-key.pem"
    }

    /// The default state folder: `.storekeeper-simulator` in the working directory.
    public static var defaultStateDirectory: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".storekeeper-simulator")
    }

    /// A CA from its parts, checked: the leaf key must be the leaf certificate's, the leaf issued by the intermediate,
    /// and the intermediate by the root.
    public init(rootDER: [UInt8], intermediateDER: [UInt8], leafDER: [UInt8], leafKey: P256.Signing.PrivateKey) throws(SimulatorStateError)
    {
        let root: Certificate
        let intermediate: Certificate
        let leaf: Certificate
        do {
            root = try Certificate(derEncoded: rootDER)
            intermediate = try Certificate(derEncoded: intermediateDER)
            leaf = try Certificate(derEncoded: leafDER)
        } catch {
            throw SimulatorStateError("a certificate of the simulator's CA is not DER X.509: \(error)")
        }
        guard P256.Signing.PublicKey(leaf.publicKey)?.rawRepresentation == leafKey.publicKey.rawRepresentation else {
            throw SimulatorStateError("the signing key is not the leaf certificate's key")
        }
        guard leaf.issuer == intermediate.subject, intermediate.publicKey.isValidSignature(leaf.signature, for: leaf),
            intermediate.issuer == root.subject, root.publicKey.isValidSignature(intermediate.signature, for: intermediate)
        else {
            throw SimulatorStateError("the certificates do not form a chain: leaf → intermediate → root")
        }
        if let problem = Self.shapeProblem(root: root, intermediate: intermediate, leaf: leaf) {
            throw SimulatorStateError(
                "the CA was made by an older version of storekeeper and lacks what Apple's chain has (\(problem)), so strict "
                    + "verifiers such as Apple's app-store-server-library refuse it; delete the state folder (or pass a new --state) "
                    + "to make a new CA, and trust its new root")
        }
        self.init(
            root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey,
            rootDER: rootDER, intermediateDER: intermediateDER, leafDER: leafDER)
    }

    /// Reads the CA kept in `directory`.
    public static func load(from directory: URL) throws(SimulatorStateError) -> SimulatorCA {
        func read(_ name: String) throws(SimulatorStateError) -> Data {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                throw SimulatorStateError("\(directory.appendingPathComponent(name).path) is missing or unreadable")
            }
            return data
        }
        let pem = String(decoding: try read(StateFile.leafKey), as: UTF8.self)
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw SimulatorStateError("\(StateFile.leafKey) is not a P-256 private key in PEM")
        }
        let root = Array(try read(StateFile.root))
        let intermediate = Array(try read(StateFile.intermediate))
        let leaf = Array(try read(StateFile.leaf))
        do {
            return try SimulatorCA(rootDER: root, intermediateDER: intermediate, leafDER: leaf, leafKey: key)
        } catch {
            throw SimulatorStateError("\(directory.path): \(error.message)")
        }
    }

    /// Writes the CA into `directory` (created if needed); the key file is readable by its owner only.
    public func save(to directory: URL) throws(SimulatorStateError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(rootDER).write(to: directory.appendingPathComponent(StateFile.root))
            try Data(intermediateDER).write(to: directory.appendingPathComponent(StateFile.intermediate))
            try Data(leafDER).write(to: directory.appendingPathComponent(StateFile.leaf))
            let keyPath = directory.appendingPathComponent(StateFile.leafKey).path
            guard
                FileManager.default.createFile(
                    atPath: keyPath, contents: Data(leafKey.pemRepresentation.utf8),
                    attributes: [.posixPermissions: 0o600])
            else { throw SimulatorStateError("cannot write \(keyPath)") }
        } catch let error as SimulatorStateError {
            throw error
        } catch {
            throw SimulatorStateError("cannot write the simulator's CA into \(directory.path): \(error)")
        }
    }

    /// The CA of a state folder, made (valid for ten years from `now`) and saved there if the folder has none.
    public static func loadOrCreate(in directory: URL, now: Date = Date()) throws(SimulatorStateError) -> SimulatorCA {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(StateFile.root).path) {
            return try load(from: directory)
        }
        let ca: SimulatorCA
        do {
            // Valid from ten years back: runs on a virtual clock sign dates in the past (a year's population ends now).
            ca = try SimulatorCA(validity: now.addingTimeInterval(-10 * 365 * 86_400)...now.addingTimeInterval(10 * 365 * 86_400))
        } catch {
            throw SimulatorStateError("cannot make a CA: \(error)")
        }
        try ca.save(to: directory)
        return ca
    }
}
