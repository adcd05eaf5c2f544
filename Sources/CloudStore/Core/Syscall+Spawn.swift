#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscall {
    /// Where a child's standard input, output and error go.
    public struct ChildFiles: Sendable {
        /// One of the three standard streams.
        public enum Stream: Sendable {
            /// This process's own.
            case inherit
            /// A file, opened for reading (input) or writing (output, error: created, then
            /// appended to or truncated first).
            case file(String, append: Bool = false)
            /// A descriptor of this process, such as one end of a pipe.
            case descriptor(Int32)
            /// Where standard output goes (for standard error).
            case output
        }

        public var input: Stream
        public var output: Stream
        public var error: Stream

        public init(input: Stream = .inherit, output: Stream = .inherit, error: Stream = .output) {
            self.input = input
            self.output = output
            self.error = error
        }

        /// Standard input from `input` (this process's when nil), output to the file `output`,
        /// error appended to the file `error` (where output goes when nil).
        public init(input: String? = nil, output: String, appendOutput: Bool = false, error: String? = nil) {
            self.init(input: input.map { .file($0) } ?? .inherit, output: .file(output, append: appendOutput),
                      error: error.map { .file($0, append: true) } ?? .output)
        }

        func add(to actions: inout posix_spawn_file_actions_t) {
            for (fd, stream) in [(Int32(0), input), (1, output), (2, error)] {
                switch stream {
                case .inherit: break
                case .file(let path, let append):
                    let flags = fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC)
                    posix_spawn_file_actions_addopen(&actions, fd, path, flags, fileMode)
                case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
                case .output: posix_spawn_file_actions_adddup2(&actions, 1, fd)
                }
            }
        }
    }

    /// Starts `path` with `arguments` (the first is the program's name) and `environment`.
    /// `newSession` puts it in a session of its own (closing the terminal does not stop it);
    /// `closeOthers` closes every descriptor of this process above 2 in the child, so that no
    /// pipe or socket of ours is kept open by it.
    public static func spawn(_ path: String, arguments: [String], environment: [String: String],
                             files: ChildFiles, newSession: Bool = false, closeOthers: Bool = false) -> R<pid_t> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The descriptors passed on are closed after their dup2, which runs first.
        files.add(to: &actions)
        if closeOthers, case .success(let fds?) = listDirectory("/proc/self/fd") {
            for fd in fds.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // The child starts with SIGPIPE's default action even when this process ignores it,
        // as a program expects (`yes | head` ends `yes`), and with no signal blocked, whatever
        // the spawning thread blocks (libdispatch's threads block nearly all: a child would not
        // stop on SIGTERM).
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        // POSIX_SPAWN_SETSIGDEF, POSIX_SPAWN_SETSIGMASK and POSIX_SPAWN_SETSID (glibc's
        // values; not exported to Swift).
        posix_spawnattr_setflags(&attr, Int16(0x04 | 0x08 | (newSession ? 0x80 : 0)))
        let cArgs = arguments.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { return .failure(SystemCallError(call: "posix_spawn", path: path, errno: rc)) }
        return .success(pid)
    }

    /// Runs `path` in place of this process, with `arguments` (the first is the program's
    /// name): the same process ID, descriptors and environment. Returns only when that fails.
    public static func exec(_ path: String, arguments: [String]) -> SystemCallError {
        let cArgs = arguments.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        execv(path, cArgs)
        return SystemCallError(call: "execv", path: path, errno: errno)
    }

    /// Whether the child `pid` has ended (and is reaped by this call); never waits.
    public static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// The exit status of the child `pid` (as `waitForExit` gives it) when it has ended, reaping
    /// it; nil while it runs. Never waits.
    public static func exitStatus(ifEnded pid: pid_t) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Waits for the child `pid` to end; its exit status, or 128 + the signal that ended it.
    public static func waitForExit(_ pid: pid_t) -> R<Int32> {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return .failure(SystemCallError(call: "waitpid", path: "pid \(pid)", errno: errno)) }
        }
        // WIFEXITED/WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
        return .success((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
    }
}
