import Foundation

// Recovery after a crash, checkpoints and log compaction. All of it runs with
// the writer's locks held and takes the apply lock, since it writes record files.
extension ZoneFolder {
    /// With the writer's lock held: recovers when a writer died during an append, or the
    /// machine restarted since the markers were written. Returns both markers as they stand
    /// after it.
    func recoverIfNeeded(_ fd: Int32) throws(CKError) -> (CommitMarker, ApplyMarker) {
        let (commit, apply) = lockFile.readMarkers(fd)
        if let commit, !commit.busy, commit.bootID == CommitMarker.currentBootID,
           apply.map({ $0.bootID == CommitMarker.currentBootID }) ?? true {
            return (commit, apply ?? ApplyMarker.assumed(from: commit))
        }
        var report = RecoveryReport()
        let recovered = try recover(fd, report: &report)
        // Recovery may leave entries to apply (a full disk): the marker it wrote says which.
        return (recovered, lockFile.readMarkers(fd).1 ?? ApplyMarker(bootID: recovered.bootID, applied: recovered.seq, end: -1))
    }

    /// What recovery found and did, for `fsck`.
    struct RecoveryReport {
        var truncatedBytes: Int64 = 0
        /// Entries only the journal held, appended to the log.
        var journaledEntries = 0
        /// A journal that was not this log's, set aside (what and where).
        var unmatchedJournal: String?
        var replayedEntries = 0
        var removedTempFiles = 0
        var damage: String?
        /// The whole entries read, after any torn tail was cut: all of the log's when it was
        /// read whole (fsck), else those from the last one the files held on.
        var entries: [LogEntry] = []
    }

    /// Cuts a torn log tail, replays committed entries the record files lack (after the apply
    /// marker on the same boot, after the checkpoint otherwise), removes stray temporary
    /// files, syncs, and writes both markers.
    ///
    /// `wholeLog` reads and checks every entry of the log (fsck compares them all with the
    /// files); otherwise only the entries from the first one replayed on are read (see
    /// ``recoveryScan(from:)``).
    @discardableResult
    func recover(_ fd: Int32, wholeLog: Bool = false, report: inout RecoveryReport) throws(CKError) -> CommitMarker {
        let marker = try withApplyLock { (fd) throws(CKError) -> CommitMarker in try recoverLocked(fd, wholeLog: wholeLog, report: &report) }
        // The log is synced: the journal starts again.
        if writerState.journal != nil { restartJournal(afterSeq: marker.seq) }
        state.withLock { state in
            state.reset()
            state.knownApplied = marker.seq
        }
        applier.clear(clearingFailure: true)
        return marker
    }

    private func recoverLocked(_ fd: Int32, wholeLog: Bool, report: inout RecoveryReport) throws(CKError) -> CommitMarker {
        let meta = try readMeta()
        let (old, oldApply) = lockFile.readMarkers(fd)
        // Same boot: page-cache writes of earlier files are there; replay after the apply
        // marker (a lock file without one: after its clean commit marker). Another boot (or
        // no marker): replay from the checkpoint.
        let current = CommitMarker.currentBootID
        let from: Int64
        if let old, old.bootID == current, let oldApply, oldApply.bootID == current {
            from = oldApply.applied
        } else if oldApply == nil, let old, old.bootID == current {
            from = old.seq
        } else {
            from = meta.checkpointSeq
        }
        let (scanned, logSize) = try recoveryScan(from: wholeLog ? nil : from)
        var entries = scanned.entries
        var logEnd = logSize
        switch scanned.outcome {
        case .clean: break
        case .tornTail(let at):
            let lfd = try Syscall.open(logPath, Posix.O_WRONLY).orThrow(.internalError, "cannot open \(logPath)")
            defer { Syscall.close(lfd) }
            // Synced with the journal's entries below.
            try Syscall.ftruncate(lfd, at, path: logPath).orThrow(.internalError, "cannot cut the torn end of \(logPath)")
            report.truncatedBytes = logSize - at
            logEnd = at
        case .damaged(let at, let reason):
            let error = CKError(.internalError, "the log of zone \(zoneID.zoneName) is damaged at byte \(at) (\(reason)) with whole entries after it; restore the zone from a backup or move log.jsonl aside and run `ckfs fsck`")
            report.damage = error.message
            writerState.fenced = error
            throw error
        }
        // Entries made durable in the journal that the log lost with the page cache.
        let journaled = try appendJournalToLog(after: max(entries.last?.0.seq ?? 0, meta.checkpointSeq), logEnd: logEnd, note: &report.unmatchedJournal)
        entries += journaled
        logEnd = journaled.last?.end ?? logEnd
        report.journaledEntries = journaled.count
        let replay = entries.map(\.0).filter { $0.seq > from }
        var replayed = replay.count
        // Where the record files stand once recovery is done: with every entry, or, when the
        // disk is too full to write them, where they stood. The log holds the rest (readers
        // see them there) and the next apply writes them in order, a delete removing its
        // files first, so a full disk never keeps a delete from freeing space.
        var applied = (seq: Int64(-1), end: Int64(-1))
        do { try writeFiles(coalescing: replay, keepingSame: true) } catch where error.diskFull != nil {
            replayed = 0
            applied = (from, entries.first { $0.0.seq == from }?.end ?? -1)
        }
        var removed = 0
        for dir in [directory, recordsPath, StoreLayout.assetsDirectory(directory)] {
            for name in (try Syscall.listDirectory(dir).orThrow(.internalError, "cannot list \(dir)")) ?? [] where name.hasPrefix(FileWriter.tempPrefix) {
                _ = Syscall.unlink(dir + "/" + name)
                removed += 1
            }
        }
        let last = entries.last?.0
        let seq = max(last?.seq ?? 0, meta.checkpointSeq)
        // The log's figure is the usage as of its last entry; a marker that is already there
        // may hold a figure fsck corrected since, so it is kept when nothing was replayed.
        let usage = old.map { $0.seq == seq && replayed == 0 ? $0.usage : (last?.usage ?? meta.usage) } ?? (last?.usage ?? meta.usage)
        if replayed > 0 || old?.bootID != current {
            // Make replayed files durable before saying they are applied.
            try syncZone()
        }
        try lockFile.writeApplyMarker(fd, applied.seq < 0 ? ApplyMarker(bootID: current, applied: seq, end: logEnd)
                                                 : ApplyMarker(bootID: current, applied: applied.seq, end: applied.end))
        let marker = CommitMarker(bootID: current, seq: seq, usage: usage, busy: false)
        try lockFile.writeCommitMarker(fd, marker)
        report.replayedEntries = replayed
        report.removedTempFiles = removed
        report.entries = entries.map(\.0)
        return marker
    }

    /// The entries of the log recovery reads, with what the scan found at their end, and the
    /// log's size. From the entry numbered `from` on (the last one the files hold, whose end
    /// is where the replay starts), found by bisecting the log (``LogSeeker``): recovery after
    /// a restart or a killed writer reads what it replays and the torn tail it cuts, not a log
    /// of up to 32 MiB whose every record it would parse. The whole log when `from` is nil
    /// (fsck compares every entry with the files), or when that entry is not where the
    /// bisection finds it (a damaged log, or one that lost its newest entries to a power cut),
    /// which only a whole read tells apart. Damage in the entries before it, which the files
    /// hold already, is fsck's to find.
    private func recoveryScan(from: Int64?) throws(CKError) -> (scan: (entries: [(LogEntry, end: Int64)], outcome: LogScanner.Outcome), size: Int64) {
        if let from, from > 0, case .success(let log) = Syscall.open(logPath, Posix.O_RDONLY) {
            defer { Syscall.close(log) }
            let size = try Syscall.fstat(log, path: logPath).orThrow(.internalError, "cannot stat \(logPath)").size
            var seeker = LogSeeker(fd: log, path: logPath, size: size) { [self] n in noteLogRead(n) }
            if let start = try seeker.start(ofFirstEntryAfter: from - 1), start > 0 {
                let bytes = try Syscall.pread(log, count: Int(size - start), offset: start, path: logPath).orThrow(.internalError, "cannot read \(logPath)")
                noteLogRead(bytes.count)
                let scanned = LogScanner.scan(bytes, baseOffset: start, zoneID: zoneID)
                if scanned.entries.first?.0.seq == from { return (scanned, start + Int64(bytes.count)) }
            }
        }
        let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        noteLogRead(bytes.count)
        return (LogScanner.scan(bytes, baseOffset: 0, zoneID: zoneID), Int64(bytes.count))
    }

    private func syncZone() throws(CKError) {
        let dfd = try Syscall.open(directory, Posix.O_RDONLY | Posix.O_DIRECTORY).orThrow(.internalError, "cannot open \(directory)")
        defer { Syscall.close(dfd) }
        try Syscall.syncfs(dfd, path: directory).orThrow(.internalError, "cannot sync zone \(zoneID.zoneName)")
    }

    /// For `fsck`: runs recovery, then `body` with what it found, in one hold of the lock.
    /// Recovery is what a fenced zone waits for, so it runs on one and lifts the fence.
    func withRecovery<T>(_ body: (RecoveryReport) throws(CKError) -> T) throws(CKError) -> T {
        defer { state.withLock { state in state.reset() } }
        return try withLockFile(ignoringFence: true) { () throws(CKError) -> T in
            var report = RecoveryReport()
            try recover(try lockFile.descriptor(), wholeLog: true, report: &report)
            writerState.fenced = nil
            return try body(report)
        }
    }

    /// Sets the usage figure in the commit marker to what `fsck` counted (under the lock).
    func fixUsage(_ usage: Int64, _ result: inout CheckResult) throws(CKError) {
        let fd = try lockFile.descriptor()
        guard var marker = lockFile.readMarkers(fd).0 else { return }
        guard marker.usage != usage else { return }
        result.repaired.append("zone \(zoneID.zoneName): usage was \(marker.usage) bytes, counted \(usage); corrected")
        marker.usage = usage
        try lockFile.writeCommitMarker(fd, marker)
    }

    // MARK: Checkpoint and compaction

    /// With the writer's lock held, after a commit: every `checkpointEvery` entries brings
    /// the files up to the log, syncs them and notes the checkpoint in `zone.json`; a log
    /// past `compactLogBytes` is cut to its newer half.
    func checkpointIfDue(_ fd: Int32, _ marker: CommitMarker) throws(CKError) {
        // The common case decides from memory: the tail offset is the log's size right after
        // our own append.
        let known = writerState.knownCheckpointSeq
        let tail = state.withLock { state in state.tailOffset }
        if known >= 0, tail >= 0, marker.seq - known < tuning.checkpointEvery, tail <= tuning.compactLogBytes { return }
        var meta = try readMeta()
        writerState.knownCheckpointSeq = meta.checkpointSeq
        let logSize = (try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)"))?.size ?? 0
        guard marker.seq - meta.checkpointSeq >= tuning.checkpointEvery || logSize > tuning.compactLogBytes else { return }
        try withApplyLock { (fd) throws(CKError) in
            try applyEntries(fd, known: applier.queued, upTo: marker.seq)
            try syncZone()
            // Read in pieces, never whole: the log may be 32 MiB, and a checkpoint comes every
            // few thousand commits. The last client change token can only be in the entries
            // after the last checkpoint (that one noted it in `zone.json`); compaction finds its
            // cut near the end and copies what it keeps.
            let log = try Syscall.open(logPath, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(logPath)")
            defer { Syscall.close(log) }
            let logStatus = try Syscall.fstat(log, path: logPath).orThrow(.internalError, "cannot stat \(logPath)")
            let size = logStatus.size
            var seeker = LogSeeker(fd: log, path: logPath, size: size) { [self] n in noteLogRead(n) }
            let floor = meta.checkpointSeq > 0 ? try seeker.start(ofFirstEntryAfter: meta.checkpointSeq) ?? 0 : 0
            if let token = try lastClientChangeToken(fd: log, before: size, notBefore: floor) { meta.clientChangeToken = token }
            meta.checkpointSeq = marker.seq
            meta.usage = marker.usage
            try writer.replace(StoreLayout.zoneFile(directory), with: JSONWriter.pretty(meta.json()), durable: true)
            writerState.knownCheckpointSeq = meta.checkpointSeq
            guard size > tuning.compactLogBytes else { return }
            // Keep the newest entries that fit in half the limit; tokens older than the first
            // kept entry then fail with changeTokenExpired. Every entry is applied now,
            // so the apply marker's `end` becomes the new log's end.
            let cut = try seeker.compactionCut(keeping: tuning.compactLogBytes / 2)
            try writer.replace(logPath, copying: cut..<size, of: log, sourcePath: logPath, durable: true)
            try lockFile.writeApplyMarker(fd, ApplyMarker(bootID: CommitMarker.currentBootID, applied: marker.seq, end: size - cut))
            followCompactedLog(replacing: logStatus.inode, size: size, cut: cut)
            // No change fetch can return the entries cut off any more: the assets only they
            // named go. Not done is not damage (fsck sweeps too), so a failure is let be.
            _ = try? sweepAssets { () throws(CKError) -> [UInt8] in
                try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
            }
        }
    }

    /// After this writer compacted the log (the old one, of `size` bytes at `inode`, cut at
    /// `cut`): the state follows the new file, which holds the same entries `cut` bytes
    /// earlier. Nothing in the zone changed, so the known names and the parsed records are
    /// kept; a tail started over would drop them, and a writer of a large zone would probe
    /// for every new name again until it listed its records folder again. When the state did
    /// not follow the old log to its end, the next look starts over, as for a log replaced by
    /// another.
    private func followCompactedLog(replacing inode: UInt64, size: Int64, cut: Int64) {
        var hold: Int32 = -1
        var newInode: UInt64 = 0
        if case .success(let f) = Syscall.open(logPath, Posix.O_RDONLY) {
            if case .success(let st) = Syscall.fstat(f, path: logPath), st.size == size - cut {
                (hold, newInode) = (f, st.inode)
            } else {
                Syscall.close(f)
            }
        }
        let released = state.withLock { (state: inout ZoneState) -> Int32 in
            guard hold >= 0, state.tailInode == inode, state.tailOffset == size else {
                state.tailOffset = -1
                return hold
            }
            defer { (state.tailInode, state.tailOffset, state.tailHold) = (newInode, size - cut, hold) }
            return state.tailHold
        }
        if released >= 0 { Syscall.close(released) }
    }
}
