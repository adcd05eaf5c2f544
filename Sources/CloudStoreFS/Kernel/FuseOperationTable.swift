import CFuse3
import CFuse3Loop
import CloudStore
import Glibc

/// libfuse's low-level operation table: each C callback decodes its arguments, calls the
/// view and replies. Errors become errnos here and nowhere else in the kernel layer.
enum FuseOperationTable {
    static func make() -> fuse_lowlevel_ops {
        var ops = CFuse3_zero_ops()
        ops.`init` = { userdata, conn in
            guard let conn else { return }
            CFuse3_conn_init(conn)
            let session = Unmanaged<FuseSession>.fromOpaque(userdata!).takeUnretainedValue()
            session.startConnection(kernelCanOpen: conn.pointee.capable & UInt32(FUSE_CAP_NO_OPEN_SUPPORT) != 0)
        }
        ops.lookup = { req, parent, name in
            reply(req) { (fs, caller) throws(FSError) in
                var e = entryParam(try fs.lookup(parent: parent, name: String(cString: name!), caller: caller))
                fuse_reply_entry(req, &e)
            }
        }
        ops.forget = { req, ino, n in
            session(req).operations.forget(ino, count: n)
            fuse_reply_none(req)
        }
        ops.forget_multi = { req, count, forgets in
            let fs = session(req).operations
            for i in 0..<count { fs.forget(forgets![i].ino, count: forgets![i].nlookup) }
            fuse_reply_none(req)
        }
        ops.getattr = { req, ino, _ in
            reply(req) { (fs, caller) throws(FSError) in
                let attributes = try fs.attributes(of: ino, caller: caller)
                var st = statOf(attributes)
                fuse_reply_attr(req, &st, attributes.cacheSeconds)
            }
        }
        ops.setattr = { req, ino, attr, toSet, fi in
            reply(req) { (fs, caller) throws(FSError) in
                var changes = AttributeChanges()
                let a = attr!.pointee
                if toSet & FUSE_SET_ATTR_MODE != 0 { changes.permissions = UInt32(a.st_mode) & 0o7777 }
                if toSet & FUSE_SET_ATTR_UID != 0 { changes.uid = a.st_uid }
                if toSet & FUSE_SET_ATTR_GID != 0 { changes.gid = a.st_gid }
                if toSet & FUSE_SET_ATTR_SIZE != 0 {
                    changes.size = Int64(a.st_size)
                    changes.sizeOwner = CFuse3_loop_setattr_owner()
                }
                let now = nowMilliseconds()
                if toSet & FUSE_SET_ATTR_ATIME_NOW != 0 { changes.accessed = now } else if toSet & FUSE_SET_ATTR_ATIME != 0 { changes.accessed = milliseconds(a.st_atim) }
                if toSet & FUSE_SET_ATTR_MTIME_NOW != 0 { changes.modified = now } else if toSet & FUSE_SET_ATTR_MTIME != 0 { changes.modified = milliseconds(a.st_mtim) }
                let attributes = try fs.setAttributes(of: ino, changes, handle: fi.map { $0.pointee.fh }, caller: caller)
                var st = statOf(attributes)
                fuse_reply_attr(req, &st, attributes.cacheSeconds)
            }
        }
        ops.readlink = { req, _ in fuse_reply_err(req, EINVAL) }
        ops.mknod = { req, _, _, mode, _ in fuse_reply_err(req, (mode & S_IFMT) == S_IFREG ? ENOSYS : EPERM) }
        ops.symlink = { req, _, _, _ in fuse_reply_err(req, EPERM) }
        ops.link = { req, _, _, _ in fuse_reply_err(req, EPERM) }
        ops.mkdir = { req, parent, name, _ in
            reply(req) { (fs, caller) throws(FSError) in
                var e = entryParam(try fs.makeDirectory(parent: parent, name: String(cString: name!), caller: caller))
                fuse_reply_entry(req, &e)
            }
        }
        ops.unlink = { req, parent, name in
            reply(req) { (fs, caller) throws(FSError) in
                try fs.unlink(parent: parent, name: String(cString: name!), caller: caller)
                fuse_reply_err(req, 0)
            }
        }
        ops.rmdir = { req, parent, name in
            reply(req) { (fs, caller) throws(FSError) in
                try fs.removeDirectory(parent: parent, name: String(cString: name!), caller: caller)
                fuse_reply_err(req, 0)
            }
        }
        ops.rename = { req, parent, name, newParent, newName, flags in
            reply(req) { (fs, caller) throws(FSError) in
                try fs.rename(parent: parent, name: String(cString: name!), newParent: newParent,
                              newName: String(cString: newName!), flags: flags, caller: caller)
                fuse_reply_err(req, 0)
            }
        }
        ops.open = { req, ino, fi in
            // ENOSYS tells the kernel to open every file itself from now on (FuseSession).
            if session(req).kernelOpens { _ = fuse_reply_err(req, ENOSYS); return }
            reply(req) { (fs, caller) throws(FSError) in
                let r = try fs.open(ino, flags: fi!.pointee.flags, caller: caller)
                apply(r, to: fi!)
                fuse_reply_open(req, fi)
            }
        }
        ops.create = { req, parent, name, mode, fi in
            reply(req) { (fs, caller) throws(FSError) in
                let (entry, r) = try fs.create(parent: parent, name: String(cString: name!), permissions: UInt32(mode) & 0o7777,
                                               flags: fi!.pointee.flags, caller: caller)
                apply(r, to: fi!)
                var e = entryParam(entry)
                fuse_reply_create(req, &e, fi)
            }
        }
        ops.read = { req, ino, size, off, fi in
            reply(req) { (fs, _) throws(FSError) in
                // Handles start at 1: fh 0 is a file the kernel opened itself (FuseSession).
                let fh = fi!.pointee.fh
                let bytes = fh == 0
                    ? try fs.read(inode: ino, count: size, offset: Int64(off))
                    : try fs.read(handle: fh, count: size, offset: Int64(off))
                _ = bytes.withUnsafeBytes { fuse_reply_buf(req, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
            }
        }
        ops.write = { req, _, buf, size, off, fi in
            reply(req) { (fs, _) throws(FSError) in
                let n = try fs.write(handle: fi!.pointee.fh, bytes: UnsafeRawBufferPointer(start: buf, count: size), offset: Int64(off),
                                     owner: fi!.pointee.lock_owner)
                fuse_reply_write(req, n)
            }
        }
        ops.flush = { req, _, fi in
            // A file the kernel opened has nothing to flush; ENOSYS stops the flushes too.
            if session(req).kernelOpens { _ = fuse_reply_err(req, ENOSYS); return }
            reply(req) { (fs, caller) throws(FSError) in
                try fs.flush(handle: fi!.pointee.fh, owner: fi!.pointee.lock_owner, caller: caller)
                fuse_reply_err(req, 0)
            }
        }
        ops.fsync = { req, _, _, fi in
            reply(req) { (fs, caller) throws(FSError) in
                try fs.fsync(handle: fi!.pointee.fh, caller: caller)
                fuse_reply_err(req, 0)
            }
        }
        ops.release = { req, _, fi in
            session(req).operations.release(handle: fi!.pointee.fh)
            fuse_reply_err(req, 0)
        }
        ops.opendir = { req, ino, fi in
            reply(req) { (fs, caller) throws(FSError) in
                let r = try fs.openDirectory(ino, caller: caller)
                apply(r, to: fi!)
                fuse_reply_open(req, fi)
            }
        }
        ops.readdir = { req, _, size, off, fi in
            reply(req) { (fs, _) throws(FSError) in
                try replyDirectory(req, fs, handle: fi!.pointee.fh, size: size, offset: off) { buf, room, entry, next in
                    var st = statOf(entry.attributes)
                    return fuse_add_direntry(req, buf, room, entry.name, &st, next)
                }
            }
        }
        ops.readdirplus = { req, _, size, off, fi in
            reply(req) { (fs, _) throws(FSError) in
                try replyDirectory(req, fs, handle: fi!.pointee.fh, size: size, offset: off, plus: true) { buf, room, entry, next in
                    var e = entryParam(NodeEntry(attributes: entry.attributes, entryTimeout: entry.entryTimeout, attributeTimeout: entry.attributes.cacheSeconds))
                    return fuse_add_direntry_plus(req, buf, room, entry.name, &e, next)
                }
            }
        }
        ops.releasedir = { req, _, fi in
            session(req).operations.releaseDirectory(handle: fi!.pointee.fh)
            fuse_reply_err(req, 0)
        }
        ops.fsyncdir = { req, _, _, _ in fuse_reply_err(req, 0) }
        ops.statfs = { req, _ in
            let fs = session(req).operations
            let s = fs.statistics(caller: callerOf(req))
            var v = statvfs()
            v.f_bsize = UInt(s.blockSize)
            v.f_frsize = UInt(s.blockSize)
            v.f_blocks = fsblkcnt_t(s.blocks)
            v.f_bfree = fsblkcnt_t(s.freeBlocks)
            v.f_bavail = fsblkcnt_t(s.freeBlocks)
            v.f_files = fsfilcnt_t(s.files)
            v.f_ffree = fsfilcnt_t(s.freeFiles)
            v.f_favail = fsfilcnt_t(s.freeFiles)
            v.f_namemax = UInt(s.nameMax)
            fuse_reply_statfs(req, &v)
        }
        // Extended attributes are not kept. The xattr operations stay unset: libfuse answers
        // ENOSYS, which the kernel remembers, so `ls -l` and every write stop asking (two
        // requests per file for `ls -l` otherwise). Callers see EOPNOTSUPP.
        return ops
    }
}

// Helpers are free functions: a C callback may not capture context, not even `Self`.


private func session(_ req: fuse_req_t?) -> FuseSession {
    Unmanaged<FuseSession>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
}

/// Fills one reply buffer with directory entries from `offset` on; `add` writes one entry
/// and returns the room it needs (nothing is written when that is more than `room`).
private func replyDirectory(_ req: fuse_req_t?, _ fs: any FileSystemOperations, handle: UInt64, size: Int, offset: off_t, plus: Bool = false,
                            _ add: (UnsafeMutablePointer<CChar>, Int, DirectoryEntry, off_t) -> Int) throws(FSError) {
    // The fewest bytes an entry takes (fuse_add_direntry: a 24-byte header and the name
    // padded to 8; fuse_add_direntry_plus: 128 bytes of attributes more), so no more entries
    // are asked for than can fit.
    let smallest = plus ? 160 : 32
    let entries = try fs.readDirectory(handle: handle, from: Int(offset), atMost: size / smallest + 1)
    var buf = [CChar](repeating: 0, count: size)
    var used = 0
    buf.withUnsafeMutableBufferPointer { b in
        for entry in entries {
            let need = add(b.baseAddress! + used, size - used, entry, off_t(entry.offset))
            if used + need > size { break }
            used += need
            // The kernel counts a lookup for every entry a readdirplus reply gives it.
            if plus { fs.noteLookup(entry) }
        }
    }
    fuse_reply_buf(req, buf, used)
}

private func callerOf(_ req: fuse_req_t?) -> CallerContext {
    let c = fuse_req_ctx(req)!.pointee
    return CallerContext(uid: c.uid, gid: c.gid, pid: c.pid)
}

/// Runs one request; a thrown ``FSError`` is the reply.
private func reply(_ req: fuse_req_t?, _ body: (any FileSystemOperations, CallerContext) throws(FSError) -> Void) {
    do {
        try body(session(req).operations, callerOf(req))
    } catch {
        fuse_reply_err(req, error.errno)
    }
}

private func apply(_ r: OpenReply, to fi: UnsafeMutablePointer<fuse_file_info>) {
    fi.pointee.fh = r.handle
    CFuse3_fi_set_keep_cache(fi, r.keepCache ? 1 : 0)
    CFuse3_fi_set_direct_io(fi, r.directIO ? 1 : 0)
    CFuse3_fi_set_noflush(fi, r.noFlush ? 1 : 0)
    CFuse3_fi_set_cache_readdir(fi, r.cacheDirectory ? 1 : 0)
}

private func entryParam(_ entry: NodeEntry) -> fuse_entry_param {
    var e = CFuse3_zero_entry()
    e.ino = entry.attributes.inode
    e.generation = 1
    e.attr = statOf(entry.attributes)
    e.attr_timeout = entry.attributeTimeout
    e.entry_timeout = entry.entryTimeout
    return e
}

private func statOf(_ a: NodeAttributes) -> stat {
    var st = CFuse3_zero_stat()
    st.st_ino = ino_t(a.inode)
    st.st_mode = (a.kind == .directory ? S_IFDIR : S_IFREG) | mode_t(a.permissions)
    st.st_nlink = nlink_t(a.links)
    st.st_uid = a.uid
    st.st_gid = a.gid
    st.st_size = off_t(a.size)
    st.st_blksize = 4096
    st.st_blocks = blkcnt_t((a.size + 511) / 512)
    st.st_mtim = timespecOf(a.modified)
    st.st_ctim = timespecOf(a.changed)
    st.st_atim = timespecOf(a.accessed)
    return st
}

private func timespecOf(_ ms: Int64) -> timespec {
    let s = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    return timespec(tv_sec: Int(s), tv_nsec: Int((ms - s * 1000) * 1_000_000))
}

private func milliseconds(_ t: timespec) -> Int64 { Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000 }

private func nowMilliseconds() -> Int64 { CloudStore.Clock.milliseconds() }
