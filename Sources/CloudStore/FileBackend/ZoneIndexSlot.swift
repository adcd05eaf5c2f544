import Synchronization

/// The zone's index file as one opening of the zone has it open, the inode it was opened at,
/// and whether its state was found to belong to the zone's log since then
/// (``ZoneFolder/trusts(_:of:)``). Apart from the rest of ``ZoneFolder``'s state: nothing
/// else changes with it, so its lock is its own, taken alone and never around another. The
/// store object's ``OpenIndexFiles`` may let go of the index held when it was not used for
/// longest; the zone then opens it again.
final class ZoneIndexSlot: Sendable {
    private struct Held {
        var file: ZoneIndexFile?
        var inode: UInt64 = 0
        var trusted = false
    }

    private let held = Mutex(Held())
    private let openFiles: OpenIndexFiles
    /// Why the last index file found damaged was removed, until ``takeDamage()`` reads it: so
    /// `fsck` reports an index it made again because it was damaged, not only one that differed.
    private let damage = Mutex<String?>(nil)
    /// When the index held was last used, on `openFiles`' clock.
    private let lastUsed = Atomic<UInt64>(0)

    init(openFiles: OpenIndexFiles) {
        self.openFiles = openFiles
    }

    /// When the index held was last used, on ``OpenIndexFiles``' clock.
    var lastUse: UInt64 { lastUsed.load(ordering: .relaxed) }

    /// The index held, when it was opened at `inode` (the file at its path now).
    func file(openedAt inode: UInt64) -> ZoneIndexFile? {
        let file = held.withLock { $0.inode == inode ? $0.file : nil }
        if file != nil { lastUsed.store(openFiles.tick(), ordering: .relaxed) }
        return file
    }

    /// The index held, whatever file its path names now.
    var file: ZoneIndexFile? { held.withLock { $0.file } }

    /// Holds `file`, opened at `inode`, not yet trusted.
    ///
    /// A file let go here and in ``release()`` and ``letGo(unusedSince:)`` is closed, when no
    /// thread still uses it, after the lock is given back: closing may checkpoint the WAL.
    func hold(_ file: ZoneIndexFile, openedAt inode: UInt64) {
        _ = replace(with: Held(file: file, inode: inode, trusted: false))
        lastUsed.store(openFiles.tick(), ordering: .relaxed)
        openFiles.opened(self)
    }

    /// Holds nothing: the files were removed.
    func release() {
        _ = replace(with: Held())
        openFiles.closed(self)
    }

    /// Lets go of the index held, unless it was used after `stamp` (``OpenIndexFiles``
    /// chose it then).
    func letGo(unusedSince stamp: UInt64) {
        _ = held.withLock { h -> ZoneIndexFile? in
            guard lastUse <= stamp else { return nil }
            defer { h = Held() }
            return h.file
        }
    }

    /// Holds `new`; returns the file held before, to be let go outside the lock.
    private func replace(with new: Held) -> ZoneIndexFile? {
        held.withLock { h -> ZoneIndexFile? in
            defer { h = new }
            return h.file
        }
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

    /// Notes that the index file was found damaged (`why`) and removed.
    func noteDamage(_ why: String) {
        damage.withLock { $0 = why }
    }

    /// Why an index file was last found damaged and removed, since the last call; nil when none was.
    func takeDamage() -> String? {
        damage.withLock { d in
            defer { d = nil }
            return d
        }
    }
}
