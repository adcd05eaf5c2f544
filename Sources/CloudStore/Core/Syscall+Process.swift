#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Syscall {
    /// Sends `signal` to process `pid`.
    @discardableResult
    public static func signal(_ pid: pid_t, _ signal: Int32) -> R<Void> {
        kill(pid, signal) == 0 ? .success(()) : .failure(SystemCallError(call: "kill", path: "process \(pid)", errno: errno))
    }

    /// Whether process `pid` exists (a zombie counts); false only when the system says there
    /// is none (`ESRCH`), not when it may not be signalled.
    public static func processExists(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The value of the environment variable `name`, nil when it is not set. Read from the
    /// C library's copy: Foundation's `ProcessInfo.environment` makes a dictionary of the
    /// whole environment at each ask, a cost of every cold command's start.
    public static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The process's effective user and group: whose permissions its file accesses have.
    public static var effectiveUserID: UInt32 { geteuid() }
    public static var effectiveGroupID: UInt32 { getegid() }
}

extension Syscall {
    /// Raises the process's soft limit on open files to its hard limit, once. A store keeps a
    /// few descriptors open per zone it has read (the lock, the log it follows, `zone.json`),
    /// so that no other file takes their inodes; the usual soft limit of 1024 would cap a
    /// process at a few hundred zones, while the hard limit is usually far higher. (Go's
    /// runtime does the same at start.)
    public static func raiseOpenFileLimit() { _ = openFileLimitRaised }

    private static let openFileLimitRaised: Bool = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        // At most 1 << 20: some systems refuse an unlimited soft limit (macOS caps it lower).
        // Tried from the most down: some systems take less than their hard limit says.
        for wanted in [min(limit.rlim_max, 1 << 20), min(limit.rlim_max, 10_240)] where limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return true }
        }
        return false
    }()
}
