import CloudStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program and times it, with stdout kept in a file. (Not its peak memory: a child
/// spawned from this process reports this process's peak as its own, since Linux carries the
/// old address space's peak across exec; run it under /usr/bin/time for that.)
struct ChildProcess {
    struct Outcome {
        var status: Int32
        var seconds: Double
        var stdout: String
    }

    static func run(_ path: String, _ args: [String], stdoutFile: String) throws(CKError) -> Outcome {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdoutFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw CKError(.internalError, "cannot start \(path): errno \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CKError(.internalError, "waitpid for \(path) failed: errno \(errno)") }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let out = (try? String(contentsOfFile: stdoutFile, encoding: .utf8)) ?? ""
        // WIFEXITED/WEXITSTATUS are macros: exited normally when the low 7 bits are 0.
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(status: exit, seconds: seconds, stdout: out)
    }

    /// Runs `script` with /bin/sh; fails unless it exits 0.
    static func shell(_ script: String, stdoutFile: String) throws(CKError) -> Outcome {
        let o = try run("/bin/sh", ["-c", script], stdoutFile: stdoutFile)
        guard o.status == 0 else { throw CKError(.internalError, "`\(script)` exited with \(o.status)") }
        return o
    }

    /// The peak resident set of a running process, in bytes (VmHWM).
    static func peakRSS(of pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kb * 1024
    }
}
