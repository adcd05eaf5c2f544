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

    /// Marks the container's folder before anything of it is written.
    func beginCopy(container: String) throws(CKError) {
        let directory = layout.containerDirectory(container)
        try writer.makeDirectories(directory)
        try Self.mark(directory, writer: writer, saying: "an import of this container has not finished")
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
