import CloudStore
import Foundation
import Logging

extension StoreView {
    // MARK: Open and create

    public func open(_ inode: UInt64, flags: Int32, caller: CallerContext) throws(FSError) -> OpenReply {
        let key = try key(inode)
        try checkReaches(key, caller)
        let truncating = flags & Posix.O_TRUNC != 0 && flags & Posix.O_ACCMODE != Posix.O_RDONLY
        switch key {
        case .record, .keyValueEntry:
            let target = ItemTarget(key)!
            let writing = flags & Posix.O_ACCMODE != Posix.O_RDONLY
            if let pending = pendingCreates.handle(for: target) {
                // A second open of a file created but not saved yet shares nothing: it starts
                // from what the creating handle has written, and reads it directly (it is no
                // version yet, so it never goes into the kernel's pages).
                let bytes = truncating ? [] : pending.lock.withLock { pending.buffer }
                let h = OpenFile(kind: .item(target), inode: inode, flags: flags, caller: caller, buffer: bytes)
                h.dirty = truncating
                if writing { h.cacheMode = itemCache.openWriter(inode) { notifier?.willWait() } }
                return OpenReply(handle: handles.add(h), keepCache: false, directIO: true)
            }
            if !writing, let t = target.record { return try openRecordReader(t, inode: inode, flags: flags, caller: caller) }
            guard let (bytes, tag) = try current(target) else { throw FSError(Posix.ENOENT) }
            if writing { try checkMayChange(target, deleting: false, caller: caller) }
            let h = OpenFile(kind: .item(target), inode: inode, flags: flags, caller: caller, buffer: truncating ? [] : bytes)
            h.dirty = truncating
            if writing {
                h.cacheMode = itemCache.openWriter(inode) { notifier?.willWait() }
                // The open's truncation and the writes change the kernel's size of the file.
                hints.forgetSize(inode)
                return OpenReply(handle: handles.add(h), keepCache: false, directIO: true)
            }
            // Only key-value entries are read here: records open in `openRecordReader`.
            let modified: Int64 = if case .keyValue(let ref, _) = target { keyValueModified(ref) } else { started }
            h.cacheMode = openReader(inode, tag: tag, size: bytes.count, modified: modified)
            return OpenReply(handle: handles.add(h), keepCache: h.cacheMode == .cached(keepPages: true),
                             directIO: h.cacheMode == .direct, noFlush: true)
        case .scratch(let id):
            guard let s = scratch.file(id) else { throw FSError(Posix.ENOENT) }
            if truncating {
                s.lock.withLock {
                    s.bytes = []
                    s.modified = Store.now()
                    s.changed = s.modified
                    scratch.emptied(s)
                }
            }
            return OpenReply(handle: handles.add(OpenFile(kind: .scratch(s), inode: inode, flags: flags, caller: caller)), keepCache: false)
        case .lostFoundFile(let name):
            if flags & Posix.O_ACCMODE != Posix.O_RDONLY { throw FSError(Posix.EPERM, "lost+found keeps rejected text; copy it elsewhere to edit it") }
            let path = lostAndFound.directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else { throw FSError(Posix.ENOENT) }
            let h = OpenFile(kind: .lostFound(path: path), inode: inode, flags: flags, caller: caller, buffer: Array(data))
            return OpenReply(handle: handles.add(h), keepCache: false, noFlush: true)
        default:
            throw FSError(Posix.EISDIR)
        }
    }

    public func create(parent: UInt64, name: String, permissions: UInt32, flags: Int32, caller: CallerContext) throws(FSError) -> (NodeEntry, OpenReply) {
        try checkName(name)
        let dir = try key(parent)
        switch dir {
        case .zone, .recordType, .keyValueFolder: break
        case .lostFound: throw FSError(Posix.EPERM, "lost+found takes no new files")
        default: throw FSError(Posix.EPERM, "files go in a record type folder (<zone>/<RecordType>/<recordName>.json) or in keyvalue/ (<key>.plist)")
        }
        try checkNotAnUnsavableItemName(dir, name)
        if let target = ItemTarget(folder: dir, fileName: name) {
            try checkItemName(target)
            if try exists(target) && !scratch.isHidden(target) {
                if flags & Posix.O_EXCL != 0 { throw FSError(Posix.EEXIST) }
                let ino = inodes.inode(for: target.key)
                let reply = try open(ino, flags: flags | Posix.O_TRUNC, caller: caller)
                return (try entry(target.key, caller: caller), reply)
            }
            let ino = inodes.inode(for: target.key)
            let h = OpenFile(kind: .item(target), inode: ino, flags: flags, caller: caller, isNew: true)
            if !pendingCreates.claim(target, by: h) { throw FSError(Posix.EEXIST, "\(name) is being created by another open") }
            // Once saved, the new item may have readers while this handle still writes.
            h.cacheMode = itemCache.openWriter(ino) { notifier?.willWait() }
            let fh = handles.add(h)
            return (try entry(target.key, caller: caller), OpenReply(handle: fh, keepCache: false, directIO: true))
        }
        if case .zone = dir, ItemFileName.record.name(name) != nil {
            throw FSError(Posix.EPERM, "record files go in a folder named after their record type: mkdir it first")
        }
        let now = Store.now()
        guard let s = scratch.make(in: dir, named: name, permissions: permissions, uid: caller.uid, gid: caller.gid, now: now) else {
            if flags & Posix.O_EXCL != 0 { throw FSError(Posix.EEXIST) }
            let ino = inodes.inode(for: try child(of: dir, named: name, caller: caller))
            let reply = try open(ino, flags: flags, caller: caller)
            return (try lookup(parent: parent, name: name, caller: caller), reply)
        }
        let ino = inodes.inode(for: .scratch(s.id))
        let fh = handles.add(OpenFile(kind: .scratch(s), inode: ino, flags: flags, caller: caller))
        return (try entry(.scratch(s.id), caller: caller), OpenReply(handle: fh, keepCache: false))
    }

    // MARK: Read and write

    public func read(handle: UInt64, count: Int, offset: Int64) throws(FSError) -> [UInt8] {
        guard let h = handles.get(handle) else { throw FSError(Posix.EBADF) }
        let bytes: [UInt8]
        switch h.kind {
        case .scratch(let s): bytes = s.lock.withLock { s.bytes }
        case .item(let target):
            if h.lock.withLock({ h.textToLoad }) { try loadText(of: h, target) }
            bytes = h.lock.withLock { h.buffer }
        case .lostFound: bytes = h.lock.withLock { h.buffer }
        case .directory: throw FSError(Posix.EISDIR)
        }
        return Self.piece(of: bytes, count: count, offset: offset)
    }

    /// What a read of `count` bytes at `offset` gets of `bytes`: nothing past the end.
    static func piece(of bytes: [UInt8], count: Int, offset: Int64) -> [UInt8] {
        guard offset < Int64(bytes.count), offset >= 0 else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }

    /// Opens a record for reading. When the kernel's pages are of the record's current
    /// version they answer the reads, so the text is read from the store only if the kernel
    /// asks for it after all (``loadText(of:_:)``): an open is then two lookups in memory.
    private func openRecordReader(_ t: RecordTarget, inode: UInt64, flags: Int32, caller: CallerContext) throws(FSError) -> OpenReply {
        let cat = try catalog(t.database, t.zone)
        // A kept text is taken with its stat: the handle then serves that version whatever the
        // kernel asks, also after a save drops the kernel's pages in the middle of the reading.
        // A stat not kept means a text not kept either: read and keep it now, not twice.
        var (loaded, kept) = renderCache.forOpen(t.ref)
        let stat: RecordStat
        if let kept { stat = kept } else {
            guard let r = try render(t, keep: true, catalog: cat) else { throw FSError(Posix.ENOENT) }
            (loaded, stat) = (r, r.stat)
        }
        guard stat.type == t.type else { throw FSError(Posix.ENOENT) }
        let h = OpenFile(kind: .item(.record(t)), inode: inode, flags: flags, caller: caller)
        h.cacheMode = openReader(inode, tag: stat.tag, size: stat.size, modified: stat.modified ?? started)
        if let loaded {
            h.buffer = loaded.bytes
        } else if h.cacheMode == .cached(keepPages: true) {
            h.textToLoad = true
        } else {
            do throws(FSError) {
                guard let r = try render(t, keep: true, catalog: cat) else { throw FSError(Posix.ENOENT) }
                // A save taken in since the stat was read: the kernel's pages, dropped at
                // this open, fill with this version, so they are said to be of it.
                if r.tag != stat.tag {
                    closeItemHandle(inode, h.cacheMode)
                    h.cacheMode = openReader(inode, tag: r.tag, size: r.bytes.count, modified: r.stat.modified ?? started)
                }
                h.buffer = r.bytes
            } catch {
                closeItemHandle(inode, h.cacheMode)
                throw error
            }
        }
        return OpenReply(handle: handles.add(h), keepCache: h.cacheMode == .cached(keepPages: true),
                         directIO: h.cacheMode == .direct, noFlush: true)
    }

    /// Counts a reader of version `tag` (`size` bytes, modified at `modified`) of `inode` in the
    /// item cache. Reads through the cache stop at the kernel's size of the file: when it may
    /// not be this version's, the kernel is made to ask for it before its first read.
    func openReader(_ inode: UInt64, tag: String, size: Int, modified: Int64) -> ItemCacheTable.Mode {
        let (mode, askSize) = itemCache.openReader(inode, tag: tag, size: Int64(size), modified: modified) { hints.kernelHas(inode, size: $0) }
        if askSize { notifier?.invalidateAttributesNow(inode) }
        return mode
    }

    /// Counts an item handle of `inode` opened in `mode` out of the item cache; the kernel asks
    /// for the attributes again when they were held at the last cached readers' version.
    func closeItemHandle(_ inode: UInt64, _ mode: ItemCacheTable.Mode) {
        guard itemCache.close(inode, mode) else { return }
        hints.forgetSize(inode)
        notifier?.invalidateAttributesNow(inode)
    }

    /// Reads the text of a record opened with the kernel's pages kept, which the kernel asks
    /// for after all: it dropped pages under memory pressure (while cached readers are open it
    /// is told their version's size and time, so a save drops none). A version saved since the
    /// open is read as a file rewritten in place is; a record deleted since is ESTALE, as a
    /// file gone from a network file system is.
    private func loadText(of h: OpenFile, _ target: ItemTarget) throws(FSError) {
        guard let (text, _) = try current(target) else {
            throw FSError(Posix.ESTALE, "\(mountPath(target)) was deleted after it was opened")
        }
        h.lock.withLock {
            if h.textToLoad { h.buffer = text }
            h.textToLoad = false
        }
    }

    /// A read with no open file: the kernel opened the file itself (a read-only mount, see
    /// ``FuseSession``), so each read renders the item as it is now. A file read in several
    /// pieces is read whole from one version: the text served at offset 0 is kept until the
    /// reader reaches its end, or the next read at offset 0.
    public func read(inode: UInt64, count: Int, offset: Int64) throws(FSError) -> [UInt8] {
        guard offset >= 0 else { throw FSError(Posix.EINVAL) }
        let key = try key(inode)
        var bytes: [UInt8]
        if offset > 0, let kept = hints.unopenedRead(inode) {
            bytes = kept
        } else {
            switch key {
            case .record, .keyValueEntry:
                guard let (text, _) = try current(ItemTarget(key)!) else { throw FSError(Posix.ENOENT) }
                bytes = text
            case .lostFoundFile(let name):
                guard let data = FileManager.default.contents(atPath: lostAndFound.directory + "/" + name) else { throw FSError(Posix.ENOENT) }
                bytes = Array(data)
            case .scratch(let id):
                guard let s = scratch.file(id) else { throw FSError(Posix.ENOENT) }
                bytes = s.lock.withLock { s.bytes }
            default:
                throw FSError(Posix.EISDIR)
            }
        }
        hints.read(inode, bytes: bytes, offset: offset, end: Int(offset) + count)
        return Self.piece(of: bytes, count: count, offset: offset)
    }

    /// The most text a file may take before writes fail with EFBIG: the item's limit plus room
    /// for the file format's own overhead (JSON's keys and base64; a property list's tags and
    /// indentation, which grows with nesting).
    func maxFileBytes(_ target: ItemTarget) -> Int {
        switch target {
        case .record: maxFileBytes
        case .keyValue: store.settings.keyValueLimits.maxValueBytes * 4 + 65536
        }
    }

    public func write(handle: UInt64, bytes: UnsafeRawBufferPointer, offset: Int64, owner: UInt64 = 0) throws(FSError) -> Int {
        guard let h = handles.get(handle) else { throw FSError(Posix.EBADF) }
        guard h.writable else { throw FSError(Posix.EBADF) }
        let end = Int(offset) + bytes.count
        switch h.kind {
        case .scratch(let s):
            guard end <= 16 << 20 else { throw FSError(Posix.EFBIG, "scratch files hold at most 16 MiB") }
            s.lock.lock()
            defer { s.lock.unlock() }
            let append = h.flags & Posix.O_APPEND != 0
            try scratch.account(s, bytes: max(s.bytes.count, append ? s.bytes.count + bytes.count : end))
            Self.splice(&s.bytes, bytes, at: Int(offset), append: append)
            s.modified = Store.now()
            s.changed = s.modified
        case .item(let t):
            let limit = maxFileBytes(t)
            guard end <= limit else {
                logger.notice("refused write to \(mountPath(t)): \(end) bytes is past the \(limit)-byte limit of its file")
                throw FSError(Posix.EFBIG, "this file holds at most \(limit) bytes")
            }
            h.lock.withLock {
                Self.splice(&h.buffer, bytes, at: Int(offset), append: h.flags & Posix.O_APPEND != 0)
                h.changed(by: owner)
            }
        default:
            throw FSError(Posix.EBADF)
        }
        return bytes.count
    }

    static func splice(_ buffer: inout [UInt8], _ bytes: UnsafeRawBufferPointer, at offset: Int, append: Bool) {
        let start = append ? buffer.count : offset
        if buffer.count < start { buffer.append(contentsOf: repeatElement(0, count: start - buffer.count)) }
        let overlap = min(bytes.count, buffer.count - start)
        if overlap > 0 { buffer.replaceSubrange(start..<(start + overlap), with: bytes[0..<overlap]) }
        if overlap < bytes.count { buffer.append(contentsOf: bytes[overlap...]) }
    }

    func truncate(_ key: NodeKey, inode: UInt64, to size: Int64, handle: UInt64?, owner: UInt64 = 0, caller: CallerContext) throws(FSError) {
        switch key {
        case .scratch(let id):
            guard let s = scratch.file(id) else { throw FSError(Posix.ENOENT) }
            s.lock.lock()
            defer { s.lock.unlock() }
            try scratch.account(s, bytes: Int(size))
            Self.resize(&s.bytes, to: Int(size))
        case .record, .keyValueEntry:
            let target = ItemTarget(key)!
            guard size <= Int64(maxFileBytes(target)) else { throw FSError(Posix.EFBIG) }
            if let fh = handle, let h = handles.get(fh), h.itemTarget == target {
                h.lock.withLock { Self.resize(&h.buffer, to: Int(size)); h.changed(by: owner) }
                return
            }
            if let pending = pendingCreates.handle(for: target) {
                pending.lock.withLock { Self.resize(&pending.buffer, to: Int(size)); pending.changed(by: owner) }
                return
            }
            // A truncate by path (no open file) is an edit of its own: save what is left.
            guard var (bytes, _) = try current(target) else { throw FSError(Posix.ENOENT) }
            if Int64(bytes.count) == size { return }
            if size == 0 { throw FSError(Posix.EINVAL, "an empty file holds nothing to save; delete the file to delete what it stands for") }
            Self.resize(&bytes, to: Int(size))
            // Not in the handle table: no other thread can reach it, so its lock is not needed.
            let h = OpenFile(kind: .item(target), inode: inode, flags: Posix.O_WRONLY, caller: caller, buffer: bytes)
            h.dirty = true
            try commit(h)
        default:
            throw FSError(Posix.EISDIR)
        }
    }

    static func resize(_ buffer: inout [UInt8], to size: Int) {
        if size < buffer.count { buffer.removeSubrange(size...) } else { buffer.append(contentsOf: repeatElement(0, count: size - buffer.count)) }
    }

    // MARK: Flush, fsync, release: where saves happen

    /// A close saves the text when the closing descriptor table is one that wrote it
    /// (``OpenFile/closeSaves(owner:)``): the writer's own close then fails with the refusal.
    public func flush(handle: UInt64, owner: UInt64 = 0, caller: CallerContext) throws(FSError) {
        guard let h = handles.get(handle) else { return }
        h.lock.lock()
        defer { h.lock.unlock() }
        guard h.closeSaves(owner: owner) else { return }
        try commit(h)
    }

    /// `fsync` saves whoever asks: only a holder of a descriptor can.
    public func fsync(handle: UInt64, caller: CallerContext) throws(FSError) {
        guard let h = handles.get(handle) else { return }
        h.lock.lock()
        defer { h.lock.unlock() }
        try commit(h)
    }

    public func release(handle: UInt64) {
        guard let h = handles.remove(handle) else { return }
        defer { if h.itemTarget != nil { closeItemHandle(h.inode, h.cacheMode) } }
        // Flush normally saved already; this is the last resort (a writer that never flushed).
        h.lock.withLock {
            do { try commit(h, final: true) } catch {}
            if h.isNew, let t = h.itemTarget {
                pendingCreates.release(t, by: h)
                if let dir = inodes.existingInode(for: t.folder), (try? exists(t)) != true {
                    notifier?.invalidateEntry(parent: dir, name: t.fileName)
                }
            }
        }
    }

    /// Saves a dirty item handle's text. Handle lock held.
    ///
    /// Empty text is never a record or a value. A shell's `> file` opens (truncating), then closes a
    /// duplicate descriptor before writing, so an empty flush waits for the writes; only the
    /// last close of a file left empty says so, in the log.
    func commit(_ h: OpenFile, final: Bool = false) throws(FSError) {
        guard h.dirty, let target = h.itemTarget else { return }
        if h.buffer.isEmpty {
            if final {
                h.dirty = false
                logger.info(h.isNew ? "\(mountPath(target)) was created but never written: nothing saved"
                            : "\(mountPath(target)) was emptied and closed: an empty file holds nothing to save, so what it stands for is unchanged")
            }
            return
        }
        h.dirty = false
        h.changedBy = []
        defer { savedOver(h.inode) }
        do throws(FSError) {
            try save(h.buffer, as: target, caller: h.caller)
            if h.isNew {
                h.isNew = false
                pendingCreates.release(target, by: h)
            }
            if let (text, _) = try? current(target) {
                h.buffer = text
            }
        } catch {
            reject(h.buffer, target: target, error: error, caller: h.caller)
            throw error
        }
    }

    /// After a save through `inode` (or a refused one, which a writer's truncation and writes
    /// changed the kernel's idea of all the same): the kernel's size and pages of it are no
    /// version's until it asks again. Dropping its attributes waits for nothing in the kernel,
    /// so it is done before the save's request is answered: the next read asks for the size.
    func savedOver(_ inode: UInt64) {
        hints.forgetSize(inode)
        itemCache.forgetPages(inode)
        notifier?.invalidateAttributesNow(inode)
    }

    /// Logs a refused save and keeps its text in lost+found.
    func reject(_ text: [UInt8], target: ItemTarget, error: FSError, caller: CallerContext) {
        let path = mountPath(target)
        let kept = lostAndFound.keep(text, mountPath: path, reason: error.reason, owner: caller, logger: logger)
        logger.notice("refused save of \(path): \(error.reason)\(kept.map { "; the text is in \(mountPoint)/\(Self.lostFoundName)/\($0)" } ?? "")")
    }
}
