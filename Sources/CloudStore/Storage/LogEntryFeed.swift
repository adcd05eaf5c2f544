import Foundation

/// The log entries an opening of a zone has parsed, by where each starts in the log: those it
/// committed itself and those it read from others' appends (``ZoneStorage/refreshTail()``).
/// Kept for the zone's catalog (``ZoneCatalog``), so that the catalog and the storage follow
/// the log as one: an entry is parsed once in a process, where the mount read and parsed its
/// own saves back after each one, and others' entries twice (the catalog, then the storage).
///
/// Kept only once a catalog follows the zone (``open()``), each taken once, and bounded: past
/// ``maximumEntries`` entries or ``maximumBytes`` of records (as ``RecordCacheBudget`` counts
/// them) not taken, all are dropped, and the catalog reads the log as before. Its lock is its
/// own, a leaf: no lock is taken under it.
final class LogEntryFeed: @unchecked Sendable {
    static let maximumEntries = 64
    static let maximumBytes = 4 << 20

    private struct Item {
        var entry: LogEntry
        var end: Int64
        var inode: UInt64
        var bytes: Int
    }

    /// Guards every `var` below.
    private let lock = NSLock()
    private var isOpen = false
    /// By the log offset each entry starts at.
    private var items: [Int64: Item] = [:]
    private var bytes = 0

    /// Starts keeping entries: a catalog follows the zone.
    func open() {
        lock.withLock { isOpen = true }
    }

    /// Keeps `entry`, which lies at `start..<end` of the log with inode `inode`.
    func put(_ entry: LogEntry, start: Int64, end: Int64, inode: UInt64) {
        guard lock.withLock({ isOpen }) else { return }
        let size = entry.saved.reduce(64 * entry.deleted.count) { $0 + RecordCacheBudget.cost(of: $1) }
        lock.withLock {
            if items.count >= Self.maximumEntries || bytes + size > Self.maximumBytes {
                items = [:]
                bytes = 0
            }
            guard size <= Self.maximumBytes else { return }
            items[start] = Item(entry: entry, end: end, inode: inode, bytes: size)
            bytes += size
        }
    }

    /// Keeps `entries`, which follow one another in the log with inode `inode` from `start`
    /// (a read of the log); when no catalog follows the zone, at the cost of one look.
    func put(_ entries: [(LogEntry, end: Int64)], from start: Int64, inode: UInt64) {
        guard !entries.isEmpty, lock.withLock({ isOpen }) else { return }
        var at = start
        for (entry, end) in entries {
            put(entry, start: at, end: end, inode: inode)
            at = end
        }
    }

    /// The entries that follow one another from `start` in the log with inode `inode`, ending
    /// at or before `size`, with where each ends; they are no longer kept, nor is any entry
    /// of another log or before `start` (the catalog is past it).
    func take(from start: Int64, inode: UInt64, upTo size: Int64) -> [(LogEntry, end: Int64)] {
        lock.withLock {
            guard !items.isEmpty else { return [] }
            var out: [(LogEntry, end: Int64)] = []
            var at = start
            while let item = items[at], item.inode == inode, item.end <= size {
                out.append((item.entry, item.end))
                at = item.end
            }
            items = items.filter { $0.key >= at && $0.value.inode == inode }
            bytes = items.values.reduce(0) { $0 + $1.bytes }
            return out
        }
    }
}
