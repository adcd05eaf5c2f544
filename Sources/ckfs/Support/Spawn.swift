import CloudStore
import Foundation

/// Starts a process in its own session (so closing the terminal does not stop it), with
/// output to a log file.
enum Spawn {
    static func detached(_ exe: String, _ args: [String], logPath: String, environment: [String: String]) throws -> Posix.pid_t {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        // Nothing else of ours goes to the daemon: a pipe or socket it kept open would keep
        // whoever started `ckfs mount` waiting for an end that never comes.
        let started = Syscall.spawn(exe, arguments: args, environment: env,
                                    files: .init(input: "/dev/null", output: logPath, appendOutput: true),
                                    newSession: true, closeOthers: true)
        return try started.orThrow(.internalError, "cannot start the mount daemon")
    }
}
