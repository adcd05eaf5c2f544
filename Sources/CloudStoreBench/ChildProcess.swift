import CloudStore
import Foundation

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
        let start = DispatchTime.now().uptimeNanoseconds
        let pid = try Syscall.spawn(path, arguments: [path] + args, environment: ProcessInfo.processInfo.environment,
                                    files: .init(output: stdoutFile, error: "/dev/null")).orThrow(.internalError, "cannot start \(path)")
        let exit = try Syscall.waitForExit(pid).orThrow(.internalError, "waiting for \(path)")
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let out = (try? String(contentsOfFile: stdoutFile, encoding: .utf8)) ?? ""
        return Outcome(status: exit, seconds: seconds, stdout: out)
    }

    /// Runs `script` with /bin/sh; fails unless it exits 0.
    static func shell(_ script: String, stdoutFile: String) throws(CKError) -> Outcome {
        let o = try run("/bin/sh", ["-c", script], stdoutFile: stdoutFile)
        guard o.status == 0 else { throw CKError(.internalError, "`\(script)` exited with \(o.status)") }
        return o
    }

    /// The peak resident set of a running process, in bytes (VmHWM).
    static func peakRSS(of pid: Posix.pid_t) -> Int? { statusBytes("VmHWM", of: pid) }

    /// The anonymous memory a running process holds now, in bytes (RssAnon): its heap and
    /// stacks, without the pages of files it maps.
    static func anonymousRSS(of pid: Posix.pid_t) -> Int? { statusBytes("RssAnon", of: pid) }

    /// A field of `/proc/<pid>/status` given in kB, in bytes.
    private static func statusBytes(_ field: String, of pid: Posix.pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
        return kb * 1024
    }
}
