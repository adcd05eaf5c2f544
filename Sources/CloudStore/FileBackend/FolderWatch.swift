import Foundation

/// The file backend's ``CommitFeed``: a commit to a zone writes the zone's log and lock file
/// in the zone's folder, and a key-value write renames a new file into its store's folder, so
/// the kernel queues an event for the followed folder inside the commit's own write, before
/// the commit is acknowledged. Built on inotify: a folder on a network file system gets no
/// events for writes made on another machine, so a follower still looks now and then
/// whatever the watch says.
///
/// `@unchecked Sendable`: its `var`s are behind `lock` (`targets`, `followed`) and `readLock`
/// (`buffer`).
final class FolderWatch<Target: Hashable & Sendable>: CommitFeed, @unchecked Sendable {
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

    init() {
        queue = Syscall.openFolderWatch()
    }

    deinit { if queue >= 0 { Syscall.close(queue) } }

    /// False when the system gives no watch: then nothing is ever reported.
    var isAvailable: Bool { queue >= 0 }

    func isFollowing(_ target: Target) -> Bool {
        lock.withLock { followed.contains(target) }
    }

    /// Every target followed now.
    var followedTargets: Set<Target> {
        lock.withLock { followed }
    }

    /// Follows the zone's folder; false for a zone of another backend.
    @discardableResult
    func follow(_ target: Target, zone: any ZoneStorage) -> Bool {
        guard let folder = zone as? ZoneFolder else { return false }
        return follow(target, folder: folder.directory)
    }

    /// Follows the folder `keyvalue.plist` is renamed into; false for a store of another
    /// backend.
    @discardableResult
    func follow(_ target: Target, keyValues storage: any KeyValueStorage) -> Bool {
        guard let file = storage as? KeyValueFile else { return false }
        return follow(target, folder: file.directory)
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
    func wait(milliseconds: Int32) -> Bool {
        Syscall.waitForFolderEvents(queue, milliseconds: milliseconds)
    }

    /// Takes every event queued now.
    func read() -> CommitFeedReport<Target> {
        var report = CommitFeedReport<Target>()
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
    var hasUnreadEvents: Bool {
        Syscall.hasUnreadFolderEvents(queue)
    }
}
