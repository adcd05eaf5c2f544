import Foundation

/// The log entries an opening of a zone has parsed, by where each starts in the log: those it
/// committed itself and those it read from others' appends (``ZoneFolder/refreshTail()``).
/// Kept for the zone's catalog (``ZoneCatalog``), so that the catalog and the storage follow
/// the log as one: an entry is parsed once in a process, where the mount read and parsed its
/// own saves back after each one, and others' entries twice (the catalog, then the storage).
///
/// Kept only once a catalog follows the zone (``open()``), each taken once, and bounded: past
/// ``maximumEntries`` entries or ``maximumBytes`` of records (as ``RecordCacheBudget`` counts
/// them) not taken, all are dropped, and the catalog reads the log as before. The feeds of a
/// store object's zones share one budget as well (``ZoneTuning/keptEntryBytes``), so zones
/// written and not read hold at most that much together; a zone that finds no room drops
/// what it kept, and asks the others (``RecordCacheBudget/relieve(except:)``): a feed whose
/// catalog took nothing since it was last asked drops what it kept, which that catalog will
/// read from the log if it looks again. Its lock is its own, a leaf: no lock is taken under it
/// (the budget is an atomic count), and the others are asked after it is let go.
final class LogEntryFeed: RecordCacheHolder, @unchecked Sendable {
    static let maximumEntries = 64
    static let maximumBytes = 4 << 20

    private struct Item {
        var entry: LogEntry
        var end: Int64
        var inode: UInt64
        var bytes: Int
    }

    /// The bytes the feeds of the store object's zones keep together.
    private let budget: RecordCacheBudget
    /// Guards every `var` below.
    private let lock = NSLock()
    private var isOpen = false
    /// By the log offset each entry starts at.
    private var items: [Int64: Item] = [:]
    private var bytes = 0
    /// Whether the catalog took entries since the feeds were last asked for room.
    private var taken = false

    init(budget: RecordCacheBudget) {
        self.budget = budget
        budget.register(self)
    }

    /// The bytes of the entries kept.
    var keptBytes: Int { lock.withLock { bytes } }

    /// Drops what it kept when the catalog took nothing since the last ask.
    func shedIfIdle() {
        lock.withLock {
            if taken { taken = false } else { dropAll() }
        }
    }

    deinit {
        budget.give(bytes)
    }

    /// Starts keeping entries: a catalog follows the zone.
    func open() {
        lock.withLock { isOpen = true }
    }

    /// Keeps `entry`, which lies at `start..<end` of the log with inode `inode`.
    func put(_ entry: LogEntry, start: Int64, end: Int64, inode: UInt64) {
        guard lock.withLock({ isOpen }) else { return }
        let size = entry.saved.reduce(64 * entry.deleted.count) { $0 + RecordCacheBudget.cost(of: $1) }
        let noRoom = lock.withLock { () -> Bool in
            if items.count >= Self.maximumEntries || bytes + size > Self.maximumBytes { dropAll() }
            guard size <= Self.maximumBytes else { return false }
            if !budget.take(size) {
                dropAll()
                guard budget.take(size) else {
                    budget.want()
                    return true
                }
            }
            items[start] = Item(entry: entry, end: end, inode: inode, bytes: size)
            bytes += size
            return false
        }
        if noRoom { budget.relieve(except: self) }
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
    /// of another log or starting before `size`: the catalog reads from the log what the
    /// entries given do not reach, and is past all of it.
    func take(from start: Int64, inode: UInt64, upTo size: Int64) -> [(LogEntry, end: Int64)] {
        lock.withLock {
            taken = true
            guard !items.isEmpty else { return [] }
            var out: [(LogEntry, end: Int64)] = []
            var at = start
            while let item = items[at], item.inode == inode, item.end <= size {
                out.append((item.entry, item.end))
                at = item.end
            }
            items = items.filter { $0.key >= size && $0.value.inode == inode }
            let kept = items.values.reduce(0) { $0 + $1.bytes }
            budget.give(bytes - kept)
            bytes = kept
            return out
        }
    }

    /// Drops every entry kept, giving their bytes back to the budget (lock held).
    private func dropAll() {
        items = [:]
        budget.give(bytes)
        bytes = 0
    }
}
