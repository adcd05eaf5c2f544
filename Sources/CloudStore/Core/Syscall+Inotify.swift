#if canImport(Glibc)
import Glibc

extension Syscall {
    /// One event of an inotify queue, as a watcher of folders needs it.
    public struct FolderEvent: Sendable {
        /// The watch it belongs to.
        public var watch: Int32
        /// The queue overflowed: events were lost, every watched folder may have changed.
        public var overflowed: Bool
        /// The folder was moved or removed, or its watch ended: it is watched no more.
        public var watchGone: Bool
    }

    /// A new inotify queue, non-blocking and closed on exec; -1 when the system has none.
    public static func openFolderWatch() -> Int32 {
        inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
    }

    /// Watches `directory` for files written, made, moved in, and for the folder itself
    /// moving or going; nil when it cannot be watched (it does not exist yet, say).
    public static func watchFolder(_ queue: Int32, _ directory: String) -> Int32? {
        let wd = inotify_add_watch(queue, directory, UInt32(IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF))
        return wd >= 0 ? wd : nil
    }

    /// Waits up to `milliseconds` for the queue to have something to read.
    public static func waitForFolderEvents(_ queue: Int32, milliseconds: Int32) -> Bool {
        var p = pollfd(fd: queue, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0
    }

    /// Reads what the queue holds now, using `buffer`.
    public static func readFolderEvents(_ queue: Int32, into buffer: inout [UInt8]) -> [FolderEvent] {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(queue, $0.baseAddress, $0.count) }
        var events: [FolderEvent] = []
        var offset = 0
        while n > 0 && offset + MemoryLayout<inotify_event>.size <= n {
            let (wd, mask, len) = buffer.withUnsafeBytes { raw -> (Int32, UInt32, UInt32) in
                let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                return (e.wd, e.mask, e.len)
            }
            offset += MemoryLayout<inotify_event>.size + Int(len)
            events.append(FolderEvent(watch: wd, overflowed: mask & UInt32(IN_Q_OVERFLOW) != 0,
                                      watchGone: mask & UInt32(IN_IGNORED | IN_MOVE_SELF | IN_DELETE_SELF) != 0))
        }
        return events
    }

    /// Whether the queue holds events not read yet; true when it cannot tell (a failed ioctl
    /// proves nothing).
    public static func hasUnreadFolderEvents(_ queue: Int32) -> Bool {
        var pending: Int32 = 0
        guard queue >= 0, ioctl(queue, UInt(FIONREAD), &pending) == 0 else { return true }
        return pending > 0
    }
}
#endif
