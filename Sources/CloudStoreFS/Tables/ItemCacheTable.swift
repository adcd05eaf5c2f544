import Foundation

/// How each open of an item file (a record or a key-value entry) reads and writes, so that
/// every read sees one saved version whole: a read after a save closed sees that save, and a
/// reader never sees a writer's unsaved text, a truncated file or a mix of two versions.
///
/// The kernel keeps one page cache and one size per inode, shared by every open of the file,
/// and a writer changes both under the readers: an `O_TRUNC` open sets the size to 0 and each
/// write past the end grows it. So:
/// - A handle open for writing never goes through the page cache (direct I/O): its text is a
///   version only once it is saved.
/// - A reader goes through the page cache ("cached") only while no writer is open and every
///   other cached reader reads the same version, so the pages hold that version alone. It
///   keeps the kernel's pages when they hold its version; otherwise the kernel drops them at
///   the open, when no cached reader of another version is left to fill them again.
/// - Any other reader gets direct I/O: each of its reads is served from the text it opened.
/// - A writer's open waits, for at most ``writerWait``, for the cached readers open at that
///   moment to close: its truncation and writes would change the size they read by.
///
/// - While cached readers are open, the kernel is told their version's size and modification
///   time, whatever has been saved since (``shown(_:size:modified:tell:)``): its reads through
///   the cache stop at the size it was last told, so a shorter newer version's size would cut
///   their text off, and a new size or time makes it drop the pages they read. When the last
///   of them closes, the kernel is made to ask again.
///
/// The lock is held only while the kernel's size of a file is decided together with what the
/// view notes of it (``InodeHints``, whose lock is a leaf); nothing else is locked under it.
final class ItemCacheTable: @unchecked Sendable {
    /// How an open reads; recorded in the handle so its release is counted back.
    enum Mode: Equatable, Sendable {
        /// Through the page cache; `keepPages` when the kernel's pages hold this version.
        case cached(keepPages: Bool)
        case direct
        case writer
    }

    private struct State {
        /// The version the kernel's pages may hold, if known.
        var pagesTag: String?
        /// The size and modification time of version `pagesTag`, told the kernel while cached
        /// readers read it.
        var pagesSize: Int64 = 0
        var pagesModified: Int64 = 0
        /// The kernel was told those although another version was current: it asks again
        /// once the cached readers are gone.
        var heldBack = false
        var cachedReaders = 0
        var writers = 0
        var isIdle: Bool { pagesTag == nil && cachedReaders == 0 && writers == 0 }
        /// No open handle; at most the version of the kernel's pages.
        var isIdleButPages: Bool { cachedReaders == 0 && writers == 0 }
    }

    /// The longest a writer's open waits for cached readers to close: long enough for any
    /// `cat`, short enough that a reader that keeps the file open (`less`, `tail -f`) only
    /// delays the writer; such a reader may then see the file change under it, as on any
    /// file system.
    static let writerWait: TimeInterval = 0.5

    /// Guards `states`; waited on by writers for cached readers to close.
    private let condition = NSCondition()
    private var states: [UInt64: State] = [:]

    /// Files whose state is only the version their pages hold are kept to this many: the
    /// kernel may hold millions of inodes, and a version forgotten only makes the next open
    /// drop the kernel's pages (read again from the daemon), never keep stale ones.
    static let idleStatesKept = 65_536

    /// How a reader of version `tag`, `size` bytes long and modified at `modified`, opens
    /// `inode`, and whether the kernel must be made to ask for the file's size before its first
    /// read (reads through the cache stop at the kernel's size). `kernelHas` answers from the
    /// sizes told, with the lock held once the reader counts: no size of another version can be
    /// told in between.
    func openReader(_ inode: UInt64, tag: String, size: Int64, modified: Int64, kernelHas: (Int64) -> Bool) -> (mode: Mode, askSize: Bool) {
        condition.withLock {
            var s = states[inode] ?? State()
            guard s.writers == 0, s.cachedReaders == 0 || s.pagesTag == tag else { return (.direct, !kernelHas(size)) }
            let keep = s.pagesTag == tag
            s.pagesTag = tag
            s.pagesSize = size
            s.pagesModified = modified
            s.cachedReaders += 1
            if states[inode] == nil, states.count >= Self.idleStatesKept { states = states.filter { !$0.value.isIdleButPages } }
            states[inode] = s
            return (.cached(keepPages: keep), !kernelHas(size))
        }
    }

    /// The size and modification time to tell the kernel of `inode`, whose current version has
    /// `size` and `modified`: the cached readers' version's while any is open. `tell` notes the
    /// size, with the lock held, so that no reader opens between the choice and the note.
    func shown(_ inode: UInt64, size: Int64, modified: Int64, tell: (Int64) -> Void) -> (size: Int64, modified: Int64) {
        condition.withLock {
            var shown = (size: size, modified: modified)
            if var s = states[inode], s.cachedReaders > 0, s.pagesSize != size || s.pagesModified != modified {
                shown = (s.pagesSize, s.pagesModified)
                s.heldBack = true
                states[inode] = s
            }
            tell(shown.size)
            return shown
        }
    }

    /// A writer opens `inode`: waits (at most ``writerWait``) for cached readers to close.
    /// `willWait` is called before waiting, so the requests that close them are still read.
    func openWriter(_ inode: UInt64, willWait: () -> Void) -> Mode {
        condition.lock()
        defer { condition.unlock() }
        if states[inode]?.cachedReaders ?? 0 > 0 {
            condition.unlock()
            willWait()
            condition.lock()
            let deadline = Date(timeIntervalSinceNow: Self.writerWait)
            while states[inode]?.cachedReaders ?? 0 > 0, condition.wait(until: deadline) {}
        }
        var s = states[inode] ?? State()
        s.writers += 1
        // The open's truncation and the writes change the kernel's pages and size.
        s.pagesTag = nil
        states[inode] = s
        return .writer
    }

    /// A handle opened in `mode` was released. True when the kernel must ask for the file's
    /// attributes again: it was told those of the version the last cached readers read, not
    /// the current one's (``shown(_:size:modified:tell:)``).
    @discardableResult
    func close(_ inode: UInt64, _ mode: Mode) -> Bool {
        condition.withLock {
            guard var s = states[inode] else { return false }
            switch mode {
            case .cached: s.cachedReaders -= 1
            case .writer: s.writers -= 1
            case .direct: return false
            }
            let askAgain = s.cachedReaders == 0 && s.heldBack
            if askAgain { s.heldBack = false }
            states[inode] = s.isIdle ? nil : s
            if s.cachedReaders == 0 { condition.broadcast() }
            return askAgain
        }
    }

    /// The kernel forgot `inode`: nothing is kept of it once no handle is open on it.
    func inodeForgotten(_ inode: UInt64) {
        condition.withLock {
            if let s = states[inode], s.cachedReaders == 0, s.writers == 0 { states[inode] = nil }
        }
    }

    /// The kernel's pages of `inode` no longer hold a version it can keep (a save, a rename
    /// onto it): the next cached open drops them.
    func forgetPages(_ inode: UInt64) {
        condition.withLock {
            guard var s = states[inode] else { return }
            s.pagesTag = nil
            states[inode] = s.isIdle ? nil : s
        }
    }
}
