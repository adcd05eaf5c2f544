/// The mark a copy leaves on what it makes until that is whole: `copy-unfinished` at the root
/// of a new store, or in the folder of a container imported into a store that exists. What
/// has one is refused when opened, so a copy stopped part way (a full disk, Ctrl-C, kill -9, a
/// damaged export) never looks whole, and a rerun makes the container anew.
extension FileStoreBackend {
    static func copyMark(in folder: String) -> String { folder + "/copy-unfinished" }

    static func isMarked(_ folder: String) -> Bool {
        if case .success(_?) = Syscall.stat(copyMark(in: folder)) { return true }
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

    /// Makes the container's folder with the mark in it: made under a temporary name
    /// (`.creating-…` beside the containers, which fsck removes if a crash leaves it) and
    /// renamed into place, so the folder never exists without its mark, even for a copy
    /// killed at once.
    func beginCopy(container: String) throws(CKError) {
        let directory = layout.containerDirectory(container)
        let temp = layout.root + "/.creating-" + StoreLayout.encode(container) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        do throws(CKError) {
            try Syscall.mkdir(temp).orThrow(.internalError, "cannot create \(temp)")
            try Self.mark(temp, writer: writer, saying: "an import of this container has not finished")
            // An empty folder in the way (none is left by ckfs) is replaced; one that holds
            // anything is the container, held already.
            switch writer.io.rename(temp, directory) {
            case .success: break
            case .failure(let e) where e.errno == Posix.ENOTEMPTY || e.errno == Posix.EEXIST:
                throw CKError(.invalidArguments, "container \(container) was made in the target while it was imported; nothing of the copy was kept")
            case .failure(let e):
                throw CKError(.internalError, "cannot put container \(container) in place", cause: .system(e))
            }
        } catch {
            ZoneFolder.removeTree(temp)
            throw error
        }
        try writer.syncDirectory(layout.root)
    }

    func finishCopy(container: String) throws(CKError) { try Self.unmark(layout.containerDirectory(container), writer: writer) }

    /// The container's folder, renamed away and removed, when it has the mark; false, and
    /// nothing touched, otherwise.
    func discardUnfinishedCopy(container: String) throws(CKError) -> Bool {
        let directory = layout.containerDirectory(container)
        guard Self.isMarked(directory) else { return false }
        let aside = layout.root + "/.discarded-" + StoreLayout.encode(container) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try writer.io.rename(directory, aside).orThrow(.internalError, "cannot set \(directory) aside")
        try writer.syncDirectory(layout.root)
        ZoneFolder.removeTree(aside)
        return true
    }

    func finishCopy() throws(CKError) { try Self.unmark(layout.root, writer: writer) }
}
