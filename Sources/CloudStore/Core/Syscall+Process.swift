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

    /// The process's effective user and group: whose permissions its file accesses have.
    public static var effectiveUserID: UInt32 { geteuid() }
    public static var effectiveGroupID: UInt32 { getegid() }
}
