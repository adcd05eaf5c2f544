import Foundation
import CloudStore
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with the engine's `posix_spawn`, its standard streams given as
/// pipes, files or this process's own.
///
/// Not Foundation's `Process`: its `run()` copies each `/proc/self/fd` entry's whole 256-byte
/// name field, past the end of readdir's buffer, and that crashed test runs holding many
/// descriptors (the bug `Syscall.forEachName` avoids). The child keeps no descriptor of this
/// process but the ones given to it.
package final class Spawned: @unchecked Sendable {
    /// Where the child's standard output or error goes.
    package enum Sink {
        /// A pipe this process reads from as the child writes (`output`, `errorOutput`).
        case pipe
        case null
        case inherit
        /// Where standard output goes (for standard error).
        case output
    }

    package let pid: pid_t
    private let stdout: PipeReader?
    private let stderr: PipeReader?
    /// Guards `input`; apart from `lock`, so that input can be closed while `wait()` waits.
    private let inputLock = NSLock()
    /// The write end of the child's standard input, nil once closed.
    private var input: Int32?
    /// Guards `status`.
    private let lock = NSLock()
    /// The exit status once reaped (128 + the signal that ended it).
    private var status: Int32?

    /// Starts `path` with `args`; `input` gives it a pipe on standard input (written with
    /// `write`), else /dev/null. Runs in `directory` when given (through /bin/sh).
    package init(_ path: String, _ args: [String], environment: [String: String]? = nil, directory: String? = nil,
         input: Bool = false, stdout: Sink = .pipe, stderr: Sink = .null) throws {
        var (program, arguments) = (path, [path] + args)
        if let directory {
            (program, arguments) = ("/bin/sh", ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory, path] + args)
        }
        var closeInParent: [Int32] = []
        var closeOnFailure: [Int32] = []
        defer { closeInParent.forEach { _ = close($0) } }
        func pipeEnds() throws -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw CKError(.internalError, "pipe: errno \(errno)") }
            // Close-on-exec, so that a child another test starts does not keep them open.
            // (`pipe2` is not exported to Swift; `closeOthers` covers a child started between.)
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        func stream(_ sink: Sink) throws -> (Syscall.ChildFiles.Stream, PipeReader?) {
            switch sink {
            case .null: return (.file("/dev/null"), nil)
            case .inherit: return (.inherit, nil)
            case .output: return (.output, nil)
            case .pipe:
                let ends = try pipeEnds()
                closeInParent.append(ends.write)
                closeOnFailure.append(ends.read)
                return (.descriptor(ends.write), PipeReader(ends.read))
            }
        }
        var inputStream = Syscall.ChildFiles.Stream.file("/dev/null")
        var inputEnd: Int32?
        let started: Result<pid_t, SystemCallError>
        let (outReader, errReader): (PipeReader?, PipeReader?)
        do {
            if input {
                let ends = try pipeEnds()
                closeInParent.append(ends.read)
                inputEnd = ends.write
                inputStream = .descriptor(ends.read)
            }
            let (outStream, out) = try stream(stdout)
            let (errStream, err) = try stream(stderr)
            (outReader, errReader) = (out, err)
            let files = Syscall.ChildFiles(input: inputStream, output: outStream, error: errStream)
            started = Syscall.spawn(program, arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                                    files: files, closeOthers: true)
        } catch {
            if let inputEnd { close(inputEnd) }
            closeOnFailure.forEach { _ = close($0) }
            throw error
        }
        guard case .success(let pid) = started else {
            if let inputEnd { close(inputEnd) }
            closeOnFailure.forEach { _ = close($0) }
            throw CKError(.internalError, "cannot start \(path): \(started)")
        }
        self.input = inputEnd
        // The readers start only now: until then their read ends are plain descriptors.
        (self.pid, self.stdout, self.stderr) = (pid, outReader, errReader)
        outReader?.start()
        errReader?.start()
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = wait()
        }
        closeInput()
    }

    /// Writing to a child that has ended fails with EPIPE rather than ending this process.
    private static let ignoreBrokenPipes: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    /// Writes `text` to the child's standard input (nothing once it has ended).
    package func write(_ text: String) {
        Self.ignoreBrokenPipes
        inputLock.withLock {
            guard let fd = input else { return }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                bytes = bytes.dropFirst(n)
            }
        }
    }

    /// Closes the child's standard input: it reads its end.
    package func closeInput() {
        inputLock.withLock {
            if let fd = input { close(fd) }
            input = nil
        }
    }

    /// Sends `signal` while the child runs (never to a pid reaped, which may be another's).
    package func signal(_ signal: Int32) {
        lock.withLock {
            if status == nil { kill(pid, signal) }
        }
    }

    /// Whether the child still runs (reaping it if it has ended).
    package var isRunning: Bool {
        lock.withLock {
            if status == nil { status = Syscall.exitStatus(ifEnded: pid) }
            return status == nil
        }
    }

    /// Waits for the child to end: its exit status, or 128 + the signal that ended it.
    @discardableResult
    package func wait() -> Int32 {
        lock.withLock {
            if let status { return status }
            let ended = (try? Syscall.waitForExit(pid).get()) ?? -1
            status = ended
            return ended
        }
    }

    /// Waits up to `seconds` for the child to end; its status, or nil while it still runs.
    package func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { usleep(20_000) }
        return isRunning ? nil : wait()
    }

    /// Standard output so far.
    package var output: Data { stdout?.current ?? Data() }
    /// Standard error so far.
    package var errorOutput: Data { stderr?.current ?? Data() }

    /// Waits until standard output so far satisfies `done`, or ends; what it holds then.
    package func output(until done: (String) -> Bool) -> String {
        String(decoding: stdout?.wait { done(String(decoding: $0, as: UTF8.self)) } ?? Data(), as: UTF8.self)
    }

    /// Standard output to its end (when the child and every process it started close it).
    package var outputToEnd: String { String(decoding: stdout?.wait { _ in false } ?? Data(), as: UTF8.self) }
    /// Standard error to its end.
    package var errorOutputToEnd: String { String(decoding: stderr?.wait { _ in false } ?? Data(), as: UTF8.self) }
}

/// Reads a pipe on a thread of its own to its end, keeping what came.
private final class PipeReader: @unchecked Sendable {
    private let fd: Int32
    private let condition = NSCondition()
    /// What came so far. Guarded by `condition`.
    private var data = Data()
    /// Whether the pipe has ended. Guarded by `condition`.
    private var ended = false

    init(_ fd: Int32) { self.fd = fd }

    func start() {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                condition.withLock {
                    data.append(contentsOf: buffer[0..<n])
                    condition.broadcast()
                }
            }
            close(fd)
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
    }

    var current: Data { condition.withLock { data } }

    func wait(until done: (Data) -> Bool) -> Data {
        condition.withLock {
            while !ended && !done(data) { condition.wait() }
            return data
        }
    }
}
