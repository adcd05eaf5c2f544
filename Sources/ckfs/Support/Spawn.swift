import CloudStore
import Foundation
import Glibc

/// Starts a process in its own session (so closing the terminal does not stop it), with
/// output to a log file.
enum Spawn {
    static func detached(_ exe: String, _ args: [String], logPath: String, environment: [String: String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours goes to the daemon: a pipe or socket it kept open would keep
        // whoever started `ckfs mount` waiting for an end that never comes.
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap({ Int32($0) }) ?? [] where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        posix_spawnattr_setflags(&attr, 0x80) // POSIX_SPAWN_SETSID (glibc; not exported to Swift)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let cArgs = args.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, exe, &actions, &attr, cArgs, cEnv)
        guard rc == 0 else { throw CKError(.internalError, "cannot start the mount daemon: \(String(cString: strerror(rc)))") }
        return pid
    }
}
