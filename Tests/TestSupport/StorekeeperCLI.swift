import Foundation

/// One run of the `storekeeper` executable.
public struct CommandRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// The `storekeeper` executable, run as users and scripts run it, for the test targets' CLI tests.
public enum StorekeeperCLI {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String { "the storekeeper executable was not found (set STOREKEEPER_BIN)" }
    }

    /// The executable: `STOREKEEPER_BIN`, else the build folder that holds the test bundle at `bundle`.
    public static func binary(near bundle: URL) throws -> URL {
        if let path = ProcessInfo.processInfo.environment["STOREKEEPER_BIN"] { return URL(fileURLWithPath: path) }
        var directory = bundle.deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("storekeeper")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw Missing()
    }

    public static func run(_ arguments: [String], stdin: Data? = nil, near bundle: URL) throws -> CommandRun {
        let child = try ChildProcess(try binary(near: bundle).path, arguments: arguments, stdout: .pipe, stderr: .pipe)
        if let stdin { child.write(stdin) }
        child.closeInput()
        let outputs = child.outputs()
        let (stdout, stderr) = (outputs.stdout, outputs.stderr)
        child.waitUntilExit()
        return CommandRun(
            status: child.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// A file holding `contents`, in the test run's directory.
    public static func temporaryFile(_ contents: Data) throws -> String {
        let url = try TestRun.scratch("file")
        try contents.write(to: url)
        return url.path
    }
}
