#if canImport(Glibc)
#endif

// Where the journal's inode lies.
//
// ext4 without a journal (and ext2) keeps 16 inodes in a 4 KiB block of its inode table, and
// its `fsync`, `fdatasync` included, writes the synced file's block whenever any of those
// inodes changed since the block was last written (`ext4_fsync_nojournal` calls
// `ext4_write_inode`, which writes the block if dirty). A zone's files are made one after the
// other, so the journal's inode would share its block with the records folder (changed by
// every record file the applier makes), `log.jsonl` (every append) and `lock` (every marker),
// and a commit's one `fdatasync` would be two disk writes more often than not (block-request
// tracing counts most commits writing the block then, and about one in ten with the journal's
// inode in a block of its own: its own time still changes once a tick).
//
// So the journal is made from unnamed files until one's inode is in no block a busy inode is
// in, counting blocks of 32 inodes (128-byte inodes in a 4 KiB block; a 16-inode block lies
// within one). The files passed over are closed, which frees them. Elsewhere than ext2/3/4
// inode numbers say nothing of where an inode is kept, and the first file is taken.
extension ZoneFolder {
    /// Inodes per block, as counted here: the most an ext4 inode table block holds.
    static let inodesPerPlacementBlock: UInt64 = 32
    /// Unnamed files tried before the journal is made wherever the next one lies.
    static let journalPlacementAttempts = 96
    static let extFileSystemMagic: Int64 = 0xEF53

    static func inodeBlock(_ inode: UInt64) -> UInt64 { (inode &- 1) / inodesPerPlacementBlock }

    /// The inode blocks of the files a commit changes besides the journal; nil where the file
    /// system is not ext2/3/4, or cannot be told.
    func busyInodeBlocks() -> Set<UInt64>? {
        guard Syscall.fileSystemType(directory) == Self.extFileSystemMagic else { return nil }
        var blocks = Set<UInt64>()
        for path in [directory, recordsPath, StoreLayout.assetsDirectory(directory), logPath, lockPath] {
            if case .success(let st?) = Syscall.stat(path) { blocks.insert(Self.inodeBlock(st.inode)) }
        }
        return blocks
    }

    /// The journal, open for writing, with its status (writer's lock held, the log synced):
    /// made when the zone has none, and made again when its inode shares a block with a busy
    /// one and a better placed file can be had. nil when it can be neither opened nor made;
    /// the commit then syncs the log, as without a journal.
    func openJournalFile(capacity: Int64) -> (fd: Int32, status: Syscall.FileStatus)? {
        let busy = busyInodeBlocks()
        switch openWithStatus(journalPath) {
        case .success(let opened):
            guard let busy, busy.contains(Self.inodeBlock(opened.status.inode)) else { return opened }
            // Nothing in it is needed (the log is synced): replaced only when the new file is
            // better placed, or each process would make one at its first commit.
            guard (try? makeJournalFile(capacity: capacity, avoiding: busy, onlyIfPlaced: true)) == true else { return opened }
            Syscall.close(opened.fd)
        case .failure(let e) where e.errno == Posix.ENOENT:
            // Made whole and durable before its first use: a frame synced into a file whose
            // name was not yet on disk would be lost with it.
            guard (try? makeJournalFile(capacity: capacity, avoiding: busy ?? [], onlyIfPlaced: false)) == true else { return nil }
        case .failure:
            return nil
        }
        return try? openWithStatus(journalPath).get()
    }

    private func openWithStatus(_ path: String) -> Result<(fd: Int32, status: Syscall.FileStatus), SystemCallError> {
        Syscall.open(path, Posix.O_WRONLY).flatMap { fd in
            Syscall.fstat(fd, path: path).map { (fd, $0) }.mapError { e in
                Syscall.close(fd)
                return e
            }
        }
    }

    /// Puts a journal of `capacity` zero bytes at `journalPath` (over any there), durably,
    /// from an unnamed file whose inode is in none of the blocks `busy`. Where no such file
    /// comes within ``journalPlacementAttempts`` (or the file system makes no unnamed files)
    /// returns false when `onlyIfPlaced`, else makes it as any other file.
    private func makeJournalFile(capacity: Int64, avoiding busy: Set<UInt64>, onlyIfPlaced: Bool) throws(CKError) -> Bool {
        let zeros = [UInt8](repeating: 0, count: Int(capacity))
        var passedOver: [Int32] = []
        defer { for fd in passedOver { Syscall.close(fd) } }
        var chosen: Int32?
        for _ in 0..<(busy.isEmpty ? 1 : Self.journalPlacementAttempts) {
            guard let fd = try Syscall.openUnnamed(in: directory).orThrow(.internalError, "cannot create a file in \(directory)") else { break }
            passedOver.append(fd)
            guard case .success(let st) = Syscall.fstat(fd, path: journalPath) else { break }
            if !busy.contains(Self.inodeBlock(st.inode)) {
                chosen = passedOver.removeLast()
                break
            }
        }
        guard let fd = chosen else {
            if onlyIfPlaced { return false }
            try writer.replace(journalPath, with: zeros, durable: true)
            return true
        }
        defer { Syscall.close(fd) }
        try writer.replace(journalPath, withUnnamed: fd, bytes: zeros)
        return true
    }
}
