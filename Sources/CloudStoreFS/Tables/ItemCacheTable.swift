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
/// The lock is a leaf: nothing else is locked while it is held.
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

    /// How a reader of version `tag` opens `inode`. The caller sees to it that the kernel asks
    /// for the file's size before it reads through the cache (its reads stop at that size).
    func openReader(_ inode: UInt64, tag: String) -> Mode {
        condition.withLock {
            var s = states[inode] ?? State()
            guard s.writers == 0, s.cachedReaders == 0 || s.pagesTag == tag else { return .direct }
            let keep = s.pagesTag == tag
            s.pagesTag = tag
            s.cachedReaders += 1
            if states[inode] == nil, states.count >= Self.idleStatesKept { states = states.filter { !$0.value.isIdleButPages } }
            states[inode] = s
            return .cached(keepPages: keep)
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

    /// A handle opened in `mode` was released.
    func close(_ inode: UInt64, _ mode: Mode) {
        condition.withLock {
            guard var s = states[inode] else { return }
            switch mode {
            case .cached: s.cachedReaders -= 1
            case .writer: s.writers -= 1
            case .direct: return
            }
            states[inode] = s.isIdle ? nil : s
            if s.cachedReaders == 0 { condition.broadcast() }
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
