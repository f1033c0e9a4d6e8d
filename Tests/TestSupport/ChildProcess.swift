import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests that run executables (`storekeeper`, `openssl`).
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` to close the descriptors the child should not
/// inherit, copying each directory entry's whole 256-byte name, and crashes now and then when an entry ends near an
/// unmapped page (swift-corelibs-foundation pull request 5472; seen here as "Bad pointer dereference" in
/// `Process.run()` while a test process held many PostgreSQL connections). Here the child closes every descriptor
/// above 2 itself (`posix_spawn_file_actions_addclosefrom_np`).
public final class ChildProcess: Sendable {
    public enum TerminationReason: Sendable { case exit, uncaughtSignal }

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Where a standard stream of the child goes.
    public enum Stream {
        /// `/dev/null`.
        case null
        /// A pipe whose other end this side reads (`output` or `onOutput`).
        case pipe
    }

    public let processIdentifier: pid_t
    private let ended = NIOLockedValueBox<Int32?>(nil)
    /// The write end of the child's standard input, until `closeInput`.
    private let input: NIOLockedValueBox<Int32?>
    /// This side's ends of the standard output and error pipes (-1: not a pipe).
    private let readEnds: [Int32]

    /// Starts `executable` with `arguments`; `environment` nil: this process's. Standard input is a pipe (see
    /// `write`, `closeInput`); standard output and error go where told.
    public init(
        _ executable: String, arguments: [String], environment: [String: String]? = nil, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        let glibc = try GlibcExtensions.shared()
        func makePipe() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard glibc.pipe2(&ends, O_CLOEXEC) == 0 else { throw SpawnError(description: "pipe2: errno \(errno)") }
            return (ends[0], ends[1])
        }
        let stdin = try makePipe()
        posix_spawn_file_actions_adddup2(&fileActions, stdin.read, 0)
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = [stdin.read]
        for (stream, target) in [(stdout, Int32(1)), (stderr, Int32(2))] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&fileActions, target, "/dev/null", O_WRONLY, 0)
                parentEnds.append(-1)
            case .pipe:
                let ends = try makePipe()
                posix_spawn_file_actions_adddup2(&fileActions, ends.write, target)
                parentEnds.append(ends.read)
                childEnds.append(ends.write)
            }
        }
        guard glibc.addCloseFrom(&fileActions, 3) == 0 else {
            throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np failed")
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in variables { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &fileActions, nil, argv, variables)
        for end in childEnds { close(end) }
        guard status == 0 else {
            close(stdin.write)
            for end in parentEnds where end >= 0 { close(end) }
            throw SpawnError(description: "posix_spawn \(executable): error \(status)")
        }
        processIdentifier = pid
        input = NIOLockedValueBox(stdin.write)
        readEnds = parentEnds
    }

    /// Writes to the child's standard input.
    public func write(_ data: Data) {
        input.withLockedValue { fd in
            guard let fd else { return }
            data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }

    /// Closes the child's standard input (it reads end of file).
    public func closeInput() {
        input.withLockedValue { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    /// Reads standard output (0) or error (1), a pipe, until the child closes it; calls `chunk` with each piece read.
    public func read(_ stream: Int, chunk: (Data) -> Void) {
        let fd = readEnds[stream]
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            chunk(Data(buffer[0..<count]))
        }
        close(fd)
    }

    /// Everything the child writes to standard output (0) or error (1), a pipe, until it closes it.
    public func output(_ stream: Int) -> Data {
        var data = Data()
        read(stream) { data.append($0) }
        return data
    }

    /// Both pipes read to their ends at once (neither can fill and stall the child): standard output and error.
    public func outputs() -> ChildOutputs {
        let error = NIOLockedValueBox(Data())
        let done = DispatchSemaphore(value: 0)
        onOutput(1) { chunk in
            if chunk.isEmpty { done.signal() } else { error.withLockedValue { $0.append(chunk) } }
        }
        let output = output(0)
        done.wait()
        return ChildOutputs(stdout: output, stderr: error.withLockedValue { $0 })
    }

    /// Reads standard output (0) or error (1) on a thread of its own, calling `chunk` with each piece, and once with
    /// no bytes at its end.
    public func onOutput(_ stream: Int, _ chunk: @escaping @Sendable (Data) -> Void) {
        Thread.detachNewThread { [self] in
            read(stream, chunk: chunk)
            chunk(Data())
        }
    }

    /// Sends SIGTERM.
    public func terminate() {
        if ended.withLockedValue({ $0 }) == nil { kill(processIdentifier, SIGTERM) }
    }

    /// Waits for the child to end (once; later calls return at once).
    public func waitUntilExit() {
        if ended.withLockedValue({ $0 }) != nil { return }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) < 0 {
            if errno != EINTR { break }
        }
        ended.withLockedValue { $0 = status }
        closeInput()
    }

    /// Whether the child has not ended yet (without waiting).
    public var isRunning: Bool {
        if ended.withLockedValue({ $0 }) != nil { return false }
        var status: Int32 = 0
        let reaped = waitpid(processIdentifier, &status, WNOHANG)
        if reaped == processIdentifier {
            ended.withLockedValue { $0 = status }
            return false
        }
        return reaped == 0
    }

    private var status: Int32 { ended.withLockedValue { $0 } ?? 0 }

    /// How the child ended (after `waitUntilExit`).
    public var terminationReason: TerminationReason { (status & 0x7f) == 0 ? .exit : .uncaughtSignal }

    /// The exit status, or the signal that ended the child (after `waitUntilExit`).
    public var terminationStatus: Int32 { (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f }
}

/// Two GNU functions Swift's Glibc module does not declare (they need `_GNU_SOURCE`), found in the C library at run
/// time: `pipe2` (a pipe whose ends no other child spawned meanwhile inherits) and
/// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later).
struct GlibcExtensions: Sendable {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    let pipe2: Pipe2
    let addCloseFrom: AddCloseFrom

    static func shared() throws -> GlibcExtensions {
        guard let library = dlopen(nil, RTLD_NOW), let pipe2 = dlsym(library, "pipe2"),
            let addCloseFrom = dlsym(library, "posix_spawn_file_actions_addclosefrom_np")
        else { throw ChildProcess.SpawnError(description: "this C library lacks pipe2 or posix_spawn_file_actions_addclosefrom_np") }
        return GlibcExtensions(
            pipe2: unsafeBitCast(pipe2, to: Pipe2.self), addCloseFrom: unsafeBitCast(addCloseFrom, to: AddCloseFrom.self))
    }
}

/// What a child process wrote, each stream read to its end.
public struct ChildOutputs: Sendable {
    public var stdout: Data
    public var stderr: Data
}
