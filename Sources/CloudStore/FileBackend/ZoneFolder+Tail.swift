import Foundation

// Following the log: the entries other processes appended since the last look, taken into
// the zone's state (``ZoneState``) under its lock (`state.withLock`).
extension ZoneFolder {
    /// Takes in entries other processes appended since the last look, so the cache stays
    /// right. A partial last entry (an append in progress) is left for the next look; cutting
    /// a torn tail is recovery's job, under the lock.
    func refreshTail() throws(CKError) {
        if state.withLock({ state in state.tailOffset < 0 }) { try recoverAfterRestartIfNeeded() }
        guard let st = try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)") else {
            state.withLock { state in state.reset() }
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist")
        }
        let (inode, offset) = state.withLock { state in (state.tailInode, state.tailOffset) }
        if offset < 0 || inode != st.inode || st.size < offset {
            // First look, or the log was compacted: nothing cached can be trusted.
            try startTail(at: st)
            return
        }
        guard st.size != offset else {
            forgetVersionsApplied()
            return
        }
        noteLogRead(Int(st.size - offset))
        let entries = try LogScanner.readAppended(logPath, from: offset, to: st.size, zoneID: zoneID)
        // The entries the record files hold by now (others' appliers write them) are not kept
        // as versions the files lack, so a process that only follows others' saves (the mount
        // while an app writes) holds none of their records once they are written.
        let applied = currentApplyMarker()?.applied
        state.withLock { state in
            if let applied { state.noteApplied(applied) }
            // Another reader (or a commit) may have moved the tail on meanwhile: only what lies
            // past it is new, and taking in an older entry again would put an older version
            // of its records back in the cache.
            guard state.tailInode == inode else { return }
            for (entry, end) in entries where end > state.tailOffset {
                state.absorb(entry)
                state.tailOffset = end
            }
        }
        entryFeed.put(entries, from: offset, inode: inode)
    }

    /// Drops the versions the files lacked that another process's applier has written since
    /// they were taken in. Without this a process that only reads the zone (a mount, a
    /// server) would keep them, outside the cache's budget and in its place, until the zone's
    /// next save: its reads would be answered from them and never cache a record. One read of
    /// the apply marker a look, only while versions are kept.
    private func forgetVersionsApplied() {
        guard state.withLock({ state in !state.unapplied.isEmpty }), let applied = currentApplyMarker()?.applied else { return }
        state.withLock { state in state.noteApplied(applied) }
    }

    /// Starts following the log at its end, taking in the entries the record files do not
    /// hold yet (those after the apply marker).
    private func startTail(at st: Syscall.FileStatus) throws(CKError) {
        // A log not followed before may be a zone made again, with a lock of its own: the one
        // held (so its inode is not another file's) is set aside when the path names another,
        // with the old zone's entries waiting for their files. Only while this process neither
        // writes nor applies the zone: a writer or applier checks the lock it holds itself, and
        // must not find it swapped under it.
        if case .success(let lock?) = Syscall.stat(lockPath), lock.inode != lockFile.inode, writeLock.try() {
            defer { writeLock.unlock() }
            if applyLock.try() {
                defer { applyLock.unlock() }
                lockFile.retire()
                applier.clear()
            }
        }
        let fd = try lockFile.descriptor()
        let (commit, apply) = lockFile.readMarkers(fd)
        var pending: [(LogEntry, end: Int64)] = []
        if let commit, let apply, apply.applied < commit.seq || commit.busy {
            pending = try entries(after: apply.applied, from: apply.end, to: st.size)
        }
        // Held while followed (`tailHold`); a log replaced between the `stat` and the open is
        // not held, and the next look, finding another inode, starts over.
        var hold: Int32 = -1
        if case .success(let f) = Syscall.open(logPath, Posix.O_RDONLY) {
            if case .success(let held) = Syscall.fstat(f, path: logPath), held.inode == st.inode { hold = f } else { Syscall.close(f) }
        }
        let released = state.withLock { (state: inout ZoneState) -> Int32 in
            state.reset()
            state.knownApplied = apply?.applied ?? -1
            state.tailInode = st.inode
            state.tailOffset = st.size
            defer { state.tailHold = hold }
            for (entry, _) in pending { state.absorb(entry) }
            return state.tailHold
        }
        if released >= 0 { Syscall.close(released) }
    }

    /// The whole entries after sequence number `seq`, reading the log from byte `from` (the
    /// apply marker's `end`; from the start when that is unknown or no longer an entry
    /// boundary) up to `size`.
    func entries(after seq: Int64, from: Int64, to size: Int64) throws(CKError) -> [(LogEntry, end: Int64)] {
        try entriesFollowing(seq, from: from, to: size).entries
    }

    /// As ``entries(after:from:to:)``, with the offset where the whole entries read end (to
    /// follow the log from, also when none of them is after `seq`).
    func entriesFollowing(_ seq: Int64, from: Int64, to size: Int64) throws(CKError) -> (entries: [(LogEntry, end: Int64)], following: Int64) {
        if from >= 0, from <= size {
            if from == size { return ([], size) }
            let log = try Syscall.open(logPath, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(logPath)")
            defer { Syscall.close(log) }
            let bytes = try Syscall.pread(log, count: Int(size - from), offset: from, path: logPath).orThrow(.internalError, "cannot read \(logPath)")
            noteLogRead(bytes.count)
            let found = LogScanner.scan(bytes, baseOffset: from, zoneID: zoneID).entries
            if let first = found.first, first.0.seq <= seq + 1 { return (found.filter { $0.0.seq > seq }, found.last!.end) }
            // Only part of a line after a line's end: an append in progress, or the torn end
            // of one killed, which the next writer cuts. No entry follows; without this every
            // reader of a zone whose writer was killed mid-append read the whole log.
            if found.isEmpty, bytes.firstIndex(ofByte: 0x0A) == nil {
                let before = from == 0 ? [0x0A] : try Syscall.pread(log, count: 1, offset: from - 1, path: logPath).orThrow(.internalError, "cannot read \(logPath)")
                if before == [0x0A] { return ([], from) }
            }
        }
        // Unknown, or the log was compacted since `from` was noted: the whole log.
        noteLogRead(Int(size))
        let all = try LogScanner.readAppended(logPath, from: 0, to: size, zoneID: zoneID)
        return (all.filter { $0.0.seq > seq }, all.last?.end ?? 0)
    }

    /// The apply marker of this boot, read without the lock; nil when there is none (an older
    /// store) or it is of an earlier boot (then the files may lack more than it says).
    func currentApplyMarker() -> ApplyMarker? {
        guard let fd = try? lockFile.descriptor(), let apply = lockFile.readMarkers(fd).1, apply.bootID == CommitMarker.currentBootID else { return nil }
        return apply
    }
}
