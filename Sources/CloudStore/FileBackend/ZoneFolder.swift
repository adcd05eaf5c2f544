import Foundation
import Synchronization

/// One zone's files, as one process uses them.
///
/// A commit is one framed entry appended to `log.jsonl` and one `fdatasync`: the commit
/// point, after which the save is acknowledged. The synced file is the zone's `journal` when
/// the entry fits in it, else the log (see ZoneFolder+Journal.swift): a file that does not
/// grow syncs without writing its inode. The record files are then replaced (temp file
/// + rename, no fsync: the log holds them) **behind** the commit, on a background queue that
/// takes every entry waiting, so a stream of saves never waits on file creation; the `lock`
/// file's apply marker says how far the files are. Readers take entries the files do not
/// hold yet from the log (``ZoneState/unapplied``), so every reader sees every acknowledged
/// save. Every `checkpointEvery` entries the file system is synced and `zone.json` notes the
/// checkpoint; after a crash the entries after the apply marker (same boot) or after the
/// checkpoint (after a reboot) are replayed.
///
/// Locks, always taken in this order: `writeLock` (this process's writers), the `flock` on
/// `lock` (other processes' writers), `applyLock` (this process's file writers), the
/// byte-range lock on the apply marker (other processes' file writers), then `state`'s
/// (the in-memory state, held briefly, never across I/O that waits on another lock). The
/// background applier takes only the last three, so it runs while the next commit waits on
/// its fdatasync. The parts of the state kept apart have locks of their own, each taken alone,
/// never around another: the index slot (``ZoneIndexSlot``) and the store object's bound on
/// open index files (``OpenIndexFiles``), `zone.json`'s memo (``ZoneMetaFile``), the lock
/// file as held and its markers as last read (``ZoneLockFile``), the entries kept for the
/// catalog (``LogEntryFeed``), the applier's queue (``ApplierQueue``), the memos of a first
/// change fetch's names and of a damaged record file, and the tests' observers
/// (``ZoneObservers``). What only a writer touches (the open log and journal, the fence, the
/// checkpoint last seen) is guarded by `writeLock`.
///
/// A read that found no room for a record in the cache asks the other zones of the store object
/// for room (``RecordCacheBudget/relieve(except:)``), holding no lock of its own: each of
/// those zones takes its `state`'s lock alone.
///
/// `@unchecked Sendable`: its only `var` is `writerState`, behind `writeLock`.
final class ZoneFolder: RecordCacheHolder, @unchecked Sendable {
    let directory: String
    let zoneID: ZoneID
    let tuning: ZoneTuning
    /// Whether this process reads the zone whole into memory or from its index file.
    let reading: ZoneReading
    let writer: FileWriter
    let io: any StorageIO

    /// This process's writers, one at a time: held across a whole commit, its I/O included.
    let writeLock = NSLock()
    /// What only a committing writer touches (``ZoneWriterState``); guarded by `writeLock`.
    var writerState = ZoneWriterState()
    /// This process's record-file writers (the applier and recovery), one at a time.
    let applyLock = NSLock()
    /// Runs the write-behind applier, one block at a time.
    let applyQueue = DispatchQueue(label: "ckfs.zone.apply")
    /// The zone's index file as this opening has it open; its lock is its own (a leaf).
    let indexSlot: ZoneIndexSlot
    /// `zone.json` as this opening last read it; its lock is its own (a leaf).
    let metaFile: ZoneMetaFile
    /// The log entries this opening committed or read, for the zone's catalog to take in
    /// without reading the log; its lock is its own (a leaf).
    let entryFeed: LogEntryFeed
    /// This opening's commits whose record files the applier has still to write; its lock is
    /// its own (a leaf).
    let applier = ApplierQueue()
    /// The lock file as this opening holds it, with its markers as last read or written; its
    /// lock is its own (a leaf).
    let lockFile: ZoneLockFile
    /// What tests watch of this opening; its lock is its own (a leaf).
    let observers = ZoneObservers()
    /// The record names, in order, that the pages of a first change fetch begun at log entry
    /// `seq` of the zone's `epoch` walk: listed once for all its pages instead of once a page.
    /// Its lock is its own (a leaf).
    let firstFetchNamesMemo = Mutex<(epoch: String, seq: Int64, names: [String])?>(nil)
    /// A record file found damaged (it does not parse), its status then, and the error: a
    /// read of every record file fails at once with that error while the file is unchanged
    /// (``knownDamage()``), instead of reading the zone up to it again at every request. Its
    /// lock is its own (a leaf).
    let damagedRecordFile = Mutex<(path: String, status: Syscall.FileStatus, error: CKError)?>(nil)

    /// The zone's catalog, once asked for (``catalog()``); its lock is its own (a leaf). The
    /// catalog holds this zone: the `ZoneFolderTable` lets it go when it forgets the zone or
    /// goes itself, and a zone forgotten keeps no catalog it is asked for after.
    let catalogSlot = Mutex<(catalog: ZoneFileCatalog?, retired: Bool)>((nil, false))

    /// The bytes of parsed records this zone's cache shares with the store object's zones.
    let cacheBudget: RecordCacheBudget
    /// What this opening knows of the zone in memory (``ZoneState``), under its own lock: the
    /// last of the order above, held briefly, never across I/O that waits on another lock.
    let state: Mutex<ZoneState>

    /// How a query answered from the index file found its page.
    enum QueryPlan: Sendable, Equatable {
        /// Walking the first sort key's values in order, testing each record.
        case sortOrder
        /// Finding the matches, then sorting them.
        case matchesSorted
        /// Walking a pair index's rows for one value in the sort key's order: only the matches.
        case pairOrder
    }

    var logPath: String { StoreLayout.logFile(directory) }
    var lockPath: String { StoreLayout.lockFile(directory) }
    var recordsPath: String { StoreLayout.recordsDirectory(directory) }

    /// `budget`: the bytes of parsed records this zone's cache shares with the store object's
    /// other zones; `openIndexFiles`: the index files they keep open together; `feedBudget`:
    /// the bytes of parsed log entries they keep for their catalogs together.
    init(directory: String, zoneID: ZoneID, io: any StorageIO, tuning: ZoneTuning, reading: ZoneReading = .inMemory,
         budget: RecordCacheBudget? = nil, openIndexFiles: OpenIndexFiles? = nil, feedBudget: RecordCacheBudget? = nil) {
        self.directory = directory
        self.zoneID = zoneID
        self.io = io
        self.writer = FileWriter(io: io)
        self.tuning = tuning
        self.reading = reading
        let cacheBudget = budget ?? RecordCacheBudget(limit: reading.cacheBytes)
        self.cacheBudget = cacheBudget
        self.state = Mutex(ZoneState(cache: RecordCache(budget: cacheBudget, limit: reading.cachedRecords(tuning.cachedRecords))))
        self.metaFile = ZoneMetaFile(path: StoreLayout.zoneFile(directory))
        self.entryFeed = LogEntryFeed(budget: feedBudget ?? RecordCacheBudget(limit: tuning.keptEntryBytes))
        self.lockFile = ZoneLockFile(path: StoreLayout.lockFile(directory), zoneName: zoneID.zoneName)
        self.indexSlot = ZoneIndexSlot(openFiles: openIndexFiles ?? OpenIndexFiles(limit: tuning.openIndexFiles))
        cacheBudget.register(self)
    }

    deinit {
        state.withLock { state in
            state.cache.removeAll()
            if state.tailHold >= 0 { Syscall.close(state.tailHold) }
        }
        if let appendLog = writerState.appendLog { Syscall.close(appendLog.fd) }
        if let journal = writerState.journal { Syscall.close(journal.fd) }
    }

    func shedIfIdle() { state.withLock { state in state.cache.shedIfIdle() } }

    /// Reports a read of `count` bytes of the log to the observer of log reads.
    func noteLogRead(_ count: Int) {
        observers.logRead?(count)
    }

    // MARK: Creating and deleting

    /// Makes a zone directory atomically: built under a temporary name, synced, renamed.
    /// Returns false when the zone exists already.
    static func create(at directory: String, meta: ZoneMeta, io: any StorageIO) throws(CKError) -> Bool {
        let writer = FileWriter(io: io)
        if case .success(_?) = Syscall.stat(directory) { return false }
        let (parent, name) = StoreLayout.split(directory)
        try writer.makeDirectory(parent)
        let temp = parent + "/.creating-" + name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try Syscall.mkdir(temp).orThrow(.internalError, "cannot create \(temp)")
        try Syscall.mkdir(StoreLayout.recordsDirectory(temp)).orThrow(.internalError, "cannot create records in \(temp)")
        try Syscall.mkdir(StoreLayout.assetsDirectory(temp)).orThrow(.internalError, "cannot create assets in \(temp)")
        try writer.replace(StoreLayout.zoneFile(temp), with: JSONWriter.pretty(meta.json()), durable: true)
        try writer.replace(StoreLayout.logFile(temp), with: [], durable: true)
        let commit = CommitMarker(bootID: CommitMarker.currentBootID, seq: 0, usage: 0, busy: false)
        let apply = ApplyMarker(bootID: CommitMarker.currentBootID, applied: 0, end: 0)
        try writer.replace(StoreLayout.lockFile(temp), with: commit.bytes() + apply.bytes(), durable: true)
        try writer.syncDirectory(StoreLayout.recordsDirectory(temp))
        try writer.syncDirectory(StoreLayout.assetsDirectory(temp))
        switch io.rename(temp, directory) {
        case .success:
            try writer.syncDirectory(parent)
            return true
        case .failure(let e) where e.errno == Posix.ENOTEMPTY || e.errno == Posix.EEXIST:
            removeTree(temp)
            return false
        case .failure(let e):
            removeTree(temp)
            throw CKError(.internalError, "cannot create zone \(meta.zoneName)", cause: .system(e))
        }
    }

    /// Deletes the zone: under its lock, the directory is renamed away (the atomic step) and
    /// then removed. Writers waiting for the lock find the zone gone.
    func delete() throws(CKError) {
        try withLockFile { () throws(CKError) in
            try withApplyLock { (_) throws(CKError) in
                let (parent, name) = StoreLayout.split(directory)
                let grave = parent + "/.deleted-" + name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
                try io.rename(directory, grave).orThrow(.internalError, "cannot delete zone \(zoneID.zoneName)")
                try writer.syncDirectory(parent)
                Self.removeTree(grave)
                closeJournal()
                applier.clear()
            }
        }
        state.withLock { state in state.reset() }
    }

    static func removeTree(_ path: String) {
        if case .success(let names?) = Syscall.listDirectory(path) {
            for n in names {
                let p = path + "/" + n
                if case .success(let st?) = Syscall.stat(p), st.isDirectory { removeTree(p) } else { _ = Syscall.unlink(p) }
            }
        }
        _ = Syscall.rmdir(path)
    }

    var exists: Bool {
        if case .success(let st?) = Syscall.stat(logPath), !st.isDirectory { return true }
        return false
    }

    func readMeta() throws(CKError) -> ZoneMeta {
        try metaFile.read(zoneName: zoneID.zoneName)
    }

    // MARK: The writer's lock

    /// Runs `body` holding this process's writer lock and the zone's `flock`, after checking
    /// that the zone was not deleted meanwhile.
    func withLockFile<T>(ignoringFence: Bool = false, _ body: () throws(CKError) -> T) throws(CKError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        if !ignoringFence, let fenced = writerState.fenced { throw fenced }
        // The zone may have been deleted (and made again) since the lock file was opened: then
        // forget all of it and take the new zone's lock, once.
        for attempt in 0..<2 {
            // Compared with the inode of the very file locked: the one held may be another by now.
            let (fd, inode) = try lockFile.descriptorAndInode()
            try Syscall.flock(fd, Posix.LOCK_EX, path: lockPath).orThrow(.internalError, "cannot lock zone \(zoneID.zoneName)")
            if case .success(let st?) = Syscall.stat(lockPath), st.inode == inode {
                defer { _ = Syscall.flock(fd, Posix.LOCK_UN, path: lockPath) }
                return try body()
            }
            _ = Syscall.flock(fd, Posix.LOCK_UN, path: lockPath)
            // Set aside, not closed: a reader may be reading its markers.
            lockFile.retire()
            state.withLock { state in state.reset() }
            applier.clear()
            closeJournal()
            if attempt == 1 { break }
        }
        throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) was deleted")
    }

    /// The commit marker, read without the lock (for usage and the newest sequence number).
    func peekMarker() throws(CKError) -> CommitMarker? {
        let fd = try lockFile.descriptor()
        return lockFile.readMarkers(fd).0
    }

    // MARK: Writing

    /// Runs a write transaction: `body` sees the zone as committed so far and returns the
    /// entry to commit (nil commits nothing). The entry is durable when this returns.
    /// `committed` runs after the commit, the zone still locked, with the entry as committed.
    func write<T>(_ body: (any ZoneTransaction) throws(CKError) -> (LogEntry?, T),
                  committed: ((LogEntry) -> Void)?) throws(CKError) -> T {
        try withLockFile { () throws(CKError) -> T in
            let fd = try lockFile.descriptor()
            var (marker, apply) = try recoverIfNeeded(fd)
            try refreshTail()
            try applyOthersEntries(upTo: marker, apply: apply)
            let txn = ZoneFolderTransaction(storage: self, lastSeq: marker.seq, usage: marker.usage)
            // Asset files this transaction made that no committed record names go before the
            // zone is let go: a refused or failed save leaves nothing behind.
            let outcome: (LogEntry?, T)
            do throws(CKError) { outcome = try body(txn) } catch {
                removeAssets(txn.createdAssets)
                throw error
            }
            guard var entry = outcome.0 else {
                removeAssets(txn.createdAssets)
                return outcome.1
            }
            let result = outcome.1
            entry.seq = marker.seq + 1
            let start: Int64, end: Int64, inode: UInt64
            do throws(CKError) {
                marker.busy = true
                try lockFile.writeCommitMarker(fd, marker)
                let frame = entry.frame()
                entry.checksum = LogEntry.framedChecksum(frame.dropLast())
                (start, end, inode) = try appendDurably(frame, seq: entry.seq)
            } catch {
                removeAssets(txn.createdAssets)
                throw error
            }
            removeAssets(txn.createdAssets.subtracting(entry.saved.flatMap(\.assetChecksums)))
            // Committed: the save is durable and is reported as done whatever happens next.
            // If the marker cannot be written, it stays busy and the next writer recovers.
            // The tail moves past the entry in the same step that takes it in: a reader that
            // found the tail past it but the cache without it read the version before it.
            state.withLock { state in
                if state.tailOffset == start { state.tailOffset = end }
                state.tailInode = inode
                state.absorb(entry)
            }
            applier.committed(entry, end: end, lockInode: lockFile.inode)
            entryFeed.put(entry, start: start, end: end, inode: inode)
            marker = CommitMarker(bootID: CommitMarker.currentBootID, seq: entry.seq, usage: entry.usage, busy: false)
            do throws(CKError) {
                try lockFile.writeCommitMarker(fd, marker)
                try checkpointIfDue(fd, marker)
            } catch {}
            scheduleApplier()
            committed?(entry)
            return result
        }
    }

    /// Appends an entry's framed line (entry `seq`) and makes it durable: the commit point.
    /// Returns where in the log it starts and ends, and the log's inode; the caller moves the
    /// tail past it.
    ///
    /// The log stays open between commits (an open and a close of its path were two of a
    /// save's ~25 system calls): `refreshTail()` stat'ed the path under the same lock just
    /// before, so a log replaced since (compaction, a zone made again) is opened anew.
    private func appendDurably(_ frame: [UInt8], seq: Int64) throws(CKError) -> (start: Int64, end: Int64, inode: UInt64) {
        let pathInode = state.withLock { state in state.tailInode }
        if let open = writerState.appendLog, open.inode != pathInode {
            Syscall.close(open.fd)
            writerState.appendLog = nil
        }
        let fd: Int32
        if let open = writerState.appendLog { fd = open.fd } else {
            fd = try Syscall.open(logPath, Posix.O_WRONLY | Posix.O_APPEND).orThrow(.internalError, "cannot open the log of zone \(zoneID.zoneName)")
        }
        let st: Syscall.FileStatus
        switch Syscall.fstat(fd, path: logPath) {
        case .success(let s): st = s
        case .failure(let e):
            if writerState.appendLog == nil { Syscall.close(fd) }
            throw CKError(.internalError, "cannot stat \(logPath)", cause: .system(e))
        }
        writerState.appendLog = (fd, st.inode)
        if case .failure(let e) = io.write(fd, frame, path: logPath) {
            // Nothing acknowledged; cut what may have been written so the log stays whole.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            throw CKError(.internalError, "cannot write the log of zone \(zoneID.zoneName); nothing was saved", cause: .system(e))
        }
        if case .failure(let e) = makeDurable(frame, seq: seq, logFD: fd) {
            // Linux reports a failed writeback once and may drop the pages: never retry and
            // then acknowledge. Cut the entry off so a replay cannot apply a save reported as
            // failed, and fence the zone until the store is opened again.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            let error = CKError(.internalError, "the disk failed to store the log of zone \(zoneID.zoneName) (\(e.path.hasSuffix("/journal") ? "its journal" : "log.jsonl")); the zone is closed until the store is opened again (then `ckfs fsck`)", cause: .system(e))
            writerState.fenced = error
            throw error
        }
        return (st.size, st.size + Int64(frame.count), st.inode)
    }
}
