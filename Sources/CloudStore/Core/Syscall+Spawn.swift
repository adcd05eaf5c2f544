#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscall {
    /// Where a child's standard input, output and error go.
    public struct ChildFiles: Sendable {
        /// A file to read standard input from; nil keeps this process's.
        public var input: String?
        /// The file standard output goes to, appended to or truncated first.
        public var output: String
        public var appendOutput: Bool
        /// The file standard error goes to; nil sends it where standard output goes.
        public var error: String?

        public init(input: String? = nil, output: String, appendOutput: Bool = false, error: String? = nil) {
            self.input = input
            self.output = output
            self.appendOutput = appendOutput
            self.error = error
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
        if let input = files.input { posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0) }
        posix_spawn_file_actions_addopen(&actions, 1, files.output, O_WRONLY | O_CREAT | (files.appendOutput ? O_APPEND : O_TRUNC), fileMode)
        if let error = files.error {
            posix_spawn_file_actions_addopen(&actions, 2, error, O_WRONLY | O_CREAT | O_APPEND, fileMode)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        if closeOthers, case .success(let fds?) = listDirectory("/proc/self/fd") {
            for fd in fds.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        if newSession { posix_spawnattr_setflags(&attr, 0x80) } // POSIX_SPAWN_SETSID (glibc; not exported to Swift)
        let cArgs = arguments.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { return .failure(SystemCallError(call: "posix_spawn", path: path, errno: rc)) }
        return .success(pid)
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
