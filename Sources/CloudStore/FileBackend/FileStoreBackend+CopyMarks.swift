/// The mark a copy leaves on what it makes until that is whole: `copy-unfinished` at the root
/// of a new store, or in the folder of a container imported into a store that exists. What
/// has one is refused when opened, so a copy stopped part way (a full disk, Ctrl-C, kill -9, a
/// damaged export) never looks whole, and a rerun makes the container anew. A container's
/// mark is held open and `flock`ed by the import making it, so a second import (or fsck) tells
/// one at work from one that stopped, and never removes a container another is making.
extension FileStoreBackend {
    static func copyMark(in folder: String) -> String { folder + "/copy-unfinished" }

    static func isMarked(_ folder: String) -> Bool {
        if case .success(_?) = Syscall.stat(copyMark(in: folder)) { return true }
        return false
    }

    /// Whether an import at work holds the mark in `folder` (its lock cannot be taken).
    static func isBeingCopied(_ folder: String) -> Bool {
        guard case .success(let fd) = Syscall.open(copyMark(in: folder), Posix.O_RDONLY) else { return false }
        defer { Syscall.close(fd) }
        if case .success(false) = Syscall.tryFlock(fd, Posix.LOCK_EX, path: copyMark(in: folder)) { return true }
        return false
    }

    /// Writes the mark durably, `text` saying what it means to whoever reads it.
    static func mark(_ folder: String, writer: FileWriter, saying text: String) throws(CKError) {
        try writer.replace(copyMark(in: folder), with: Array((text + "\n").utf8), durable: true)
    }

    /// Removes the mark, durably; nothing to do without one.
    static func unmark(_ folder: String, writer: FileWriter) throws(CKError) {
        guard isMarked(folder) else { return }
        try Syscall.unlink(copyMark(in: folder)).orThrow(.internalError, "cannot remove \(copyMark(in: folder))")
        try writer.syncDirectory(folder)
    }

    /// Makes the container's folder with the mark in it, the mark held locked: made under a
    /// temporary name (`.creating-…` beside the containers, which fsck removes if a crash
    /// leaves it) and renamed into place only where nothing has the container's name, so the
    /// folder never exists without its mark, even for a copy killed at once.
    func beginCopy(container: String) throws(CKError) {
        let directory = layout.containerDirectory(container)
        let temp = layout.root + "/.creating-" + StoreLayout.encode(container) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var held: Int32?
        do throws(CKError) {
            try Syscall.mkdir(temp).orThrow(.internalError, "cannot create \(temp)")
            try Self.mark(temp, writer: writer, saying: "an import of this container has not finished")
            let mark = Self.copyMark(in: temp)
            let fd = try Syscall.open(mark, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(mark)")
            held = fd
            _ = try Syscall.tryFlock(fd, Posix.LOCK_EX, path: mark).orThrow(.internalError, "cannot lock \(mark)")
            switch Syscall.renameNoReplace(temp, directory) {
            case .success: break
            case .failure(let e) where e.errno == Posix.EEXIST || e.errno == Posix.ENOTEMPTY:
                throw CKError(.invalidArguments, "container \(container) was made in the target while it was imported; nothing of the copy was kept")
            case .failure(let e):
                throw CKError(.internalError, "cannot put container \(container) in place", cause: .system(e))
            }
        } catch {
            if let held { Syscall.close(held) }
            ZoneFolder.removeTree(temp)
            throw error
        }
        if let held { copyLocks.withLock { $0[container] = held } }
        try writer.syncDirectory(layout.root)
    }

    /// Removes the mark, then lets its lock go.
    func finishCopy(container: String) throws(CKError) {
        try Self.unmark(layout.containerDirectory(container), writer: writer)
        if let fd = copyLocks.withLock({ $0.removeValue(forKey: container) }) { Syscall.close(fd) }
    }

    /// Lets the mark's lock go, the mark kept.
    func abandonCopy(container: String) {
        if let fd = copyLocks.withLock({ $0.removeValue(forKey: container) }) { Syscall.close(fd) }
    }

    func isUnfinishedCopy(container: String) -> Bool { Self.isMarked(layout.containerDirectory(container)) }

    /// The container's folder, renamed away and removed, when it has the mark and no import
    /// is at work on it.
    func discardUnfinishedCopy(container: String) throws(CKError) {
        let directory = layout.containerDirectory(container)
        guard Self.isMarked(directory) else { return }
        guard !Self.isBeingCopied(directory) else {
            throw CKError(.serviceUnavailable, "container \(container) is being imported into \(layout.root) by another import now; let it end, then run this one again")
        }
        let aside = layout.root + "/.discarded-" + StoreLayout.encode(container) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try writer.io.rename(directory, aside).orThrow(.internalError, "cannot set \(directory) aside")
        try writer.syncDirectory(layout.root)
        ZoneFolder.removeTree(aside)
    }

    func finishCopy() throws(CKError) { try Self.unmark(layout.root, writer: writer) }
}
