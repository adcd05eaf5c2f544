import Synchronization

/// The zone's index file as one opening of the zone has it open, the inode it was opened at,
/// and whether its state was found to belong to the zone's log since then
/// (``ZoneStorage/trusts(_:of:)``). Apart from the rest of ``ZoneStorage``'s state: nothing
/// else changes with it, so its lock is its own, taken alone and never around another.
final class ZoneIndexSlot: Sendable {
    private struct Held {
        var file: ZoneIndexFile?
        var inode: UInt64 = 0
        var trusted = false
    }

    private let held = Mutex(Held())

    /// The index held, when it was opened at `inode` (the file at its path now).
    func file(openedAt inode: UInt64) -> ZoneIndexFile? {
        held.withLock { $0.inode == inode ? $0.file : nil }
    }

    /// The index held, whatever file its path names now.
    var file: ZoneIndexFile? { held.withLock { $0.file } }

    /// Holds `file`, opened at `inode`, not yet trusted.
    func hold(_ file: ZoneIndexFile, openedAt inode: UInt64) {
        held.withLock { $0 = Held(file: file, inode: inode, trusted: false) }
    }

    /// Holds nothing: the files were removed.
    func release() {
        held.withLock { $0 = Held() }
    }

    /// Whether `index` is the one held and was found to belong to the log.
    func trusts(_ index: ZoneIndexFile) -> Bool {
        held.withLock { $0.trusted && $0.file === index }
    }

    /// Notes that `index`, when it is still the one held, belongs to the log.
    func trust(_ index: ZoneIndexFile) {
        held.withLock { if $0.file === index { $0.trusted = true } }
    }

    /// Forgets that the index held belongs to the log: it is being made again.
    func distrust() {
        held.withLock { $0.trusted = false }
    }
}
