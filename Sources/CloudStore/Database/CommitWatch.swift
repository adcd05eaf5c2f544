import Foundation

/// Tells a process when the zones and key-value stores it follows are committed to, by any
/// process, without its knowing where their files are: a commit to a zone writes the zone's
/// log and lock file in the zone's folder, and a key-value write renames a new file into its
/// store's folder, so the kernel queues an event for the followed folder inside the commit's
/// own write, before the commit is acknowledged.
///
/// Each followed thing is named by a `Target` of the caller's. ``wait(milliseconds:)`` waits
/// for events, ``read()`` takes what is queued (it never blocks), and ``hasUnreadEvents``
/// tells whether anything is queued and not read yet. Built on inotify: a folder on a network
/// file system gets no events for writes made on another machine, so a follower still looks
/// now and then whatever the watch says.
package final class CommitWatch<Target: Hashable & Sendable>: @unchecked Sendable {
    /// What a ``read()`` found.
    public struct Report: Sendable {
        /// Targets committed to (or whose folder moved or went), in the order read.
        public var written: [Target] = []
        /// Targets no longer followed: their folder moved or went (a deleted zone's folder is
        /// renamed away first). ``follow(_:zone:in:)`` follows whatever folder has the path now.
        public var unfollowed: [Target] = []
        /// Events were lost: every target followed may have been committed to.
        public var overflowed = false
    }

    /// The inotify queue (non-blocking); -1 when the system has none.
    private let queue: Int32
    /// Guards `targets` and `followed`; taken alone.
    private let lock = NSLock()
    /// The targets each watch stands for: the system gives one watch per folder, and several
    /// targets may name one folder (a zone as its owner and as a participant sees it).
    private var targets: [Int32: [Target]] = [:]
    private var followed: Set<Target> = []
    /// Guards `buffer`, which ``read()`` reads the queue into; taken alone.
    private let readLock = NSLock()
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    public init() {
        queue = Syscall.openFolderWatch()
    }

    deinit { if queue >= 0 { Syscall.close(queue) } }

    /// False when the system gives no watch: then nothing is ever reported.
    public var isAvailable: Bool { queue >= 0 }

    public func isFollowing(_ target: Target) -> Bool {
        lock.withLock { followed.contains(target) }
    }

    /// Every target followed now.
    public var followedTargets: Set<Target> {
        lock.withLock { followed }
    }

    /// Follows commits to zone `zone` of `database` as `target`; false when it cannot be
    /// followed yet (its folder is not made before the zone's first save), so a later call
    /// tries again.
    @discardableResult
    public func follow(_ target: Target, zone: String, in database: Database) -> Bool {
        follow(target, folder: database.zoneDirectory(zone))
    }

    /// Follows writes to `folder` as `target`.
    func follow(_ target: Target, folder: String) -> Bool {
        guard let watch = Syscall.watchFolder(queue, folder) else { return false }
        lock.withLock {
            if targets[watch]?.contains(target) != true { targets[watch, default: []].append(target) }
            followed.insert(target)
        }
        return true
    }

    /// Waits up to `milliseconds` for something to read; true when there is.
    public func wait(milliseconds: Int32) -> Bool {
        Syscall.waitForFolderEvents(queue, milliseconds: milliseconds)
    }

    /// Takes every event queued now.
    public func read() -> Report {
        var report = Report()
        let events = readLock.withLock { Syscall.readFolderEvents(queue, into: &buffer) }
        for event in events {
            if event.overflowed {
                report.overflowed = true
                continue
            }
            let gone = event.watchGone
            let named = lock.withLock { () -> [Target] in
                guard let ts = targets[event.watch] else { return [] }
                if gone {
                    targets[event.watch] = nil
                    followed.subtract(ts)
                }
                return ts
            }
            report.written += named
            if gone { report.unfollowed += named }
        }
        return report
    }

    /// Whether events are queued and not read yet; true when it cannot tell.
    public var hasUnreadEvents: Bool {
        Syscall.hasUnreadFolderEvents(queue)
    }
}
