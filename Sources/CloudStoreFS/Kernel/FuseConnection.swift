import CloudStore
import Foundation
import Glibc

/// A ckfs mount as the kernel lists it: its FUSE connection and the daemon that serves it.
///
/// A daemon killed while a client waits on it can be left with one thread the kernel holds
/// uninterruptibly (an invalidation waits for a folder lock that the client's rename holds
/// while it waits for the dead daemon's answer). The device stays open, so the kernel never
/// ends the connection, and the clients wait for ever. Aborting the connection through fusectl
/// (`/sys/fs/fuse/connections/<n>/abort`) fails every request in flight and frees them all.
public struct FuseConnection: Equatable, Sendable {
    /// The connection's number in fusectl: the minor number of the mount's device.
    public var number: String
    /// The daemon's pid, from the mount's source (`ckfs:<pid>`).
    public var daemon: pid_t?

    /// The mount's source name: the daemon's pid, so that a mount can be traced to its daemon.
    static func sourceName(daemon: pid_t) -> String { "ckfs:\(daemon)" }

    /// The ckfs mount at `mountPoint` (an absolute path), if there is one.
    public static func at(_ mountPoint: String) -> FuseConnection? {
        guard let info = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        let escaped = mountPoint.replacingOccurrences(of: " ", with: "\\040")
        for line in info.split(separator: "\n") {
            // id parent major:minor root mountpoint options ... - fstype source superoptions
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 4, fields[4] == escaped, let dash = fields.firstIndex(of: "-"), dash + 2 < fields.count,
                  fields[dash + 1].hasPrefix("fuse"), let minor = fields[2].split(separator: ":").last else { continue }
            let source = fields[dash + 2]
            let daemon = source.hasPrefix("ckfs:") ? pid_t(source.dropFirst(5)) : nil
            return FuseConnection(number: String(minor), daemon: daemon)
        }
        return nil
    }

    /// Whether the daemon can still answer: false once it is gone or dying (a zombie leader,
    /// its other threads killed or stuck in the kernel).
    public var daemonIsAlive: Bool {
        guard let daemon, let stat = try? String(contentsOfFile: "/proc/\(daemon)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)...].first
        return state != "Z" && state != "X" && state != "x"
    }

    static let control = "/sys/fs/fuse/connections"

    /// Ends the connection: every request waiting on the daemon fails with ENOTCONN. Mounts
    /// fusectl first where the system has not (it needs root, as the abort does).
    @discardableResult
    public func abort() -> Bool {
        let file = "\(Self.control)/\(number)/abort"
        if case .success(nil) = Syscall.stat(file) { _ = Syscall.mount("fusectl", at: Self.control) }
        guard case .success(let fd) = Syscall.open(file, O_WRONLY) else { return false }
        defer { Syscall.close(fd) }
        return (try? Syscall.writeAll(fd, Array("1".utf8), path: file).get()) != nil
    }
}
