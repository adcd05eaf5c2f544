import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tuning of the commit path; defaults suit most stores.
public struct ZoneTuning: Sendable {
    /// Sync record files and note a checkpoint after this many entries.
    public var checkpointEvery: Int64 = 4096
    /// Compact the log (keep the newer half) once it is larger than this.
    public var compactLogBytes: Int64 = 32 << 20
    /// Parsed records kept in memory per zone.
    public var cachedRecords: Int = 50_000
    /// Write record files on a background queue after the commit (true), or before the save
    /// returns (false). Either way the save is durable at its commit point.
    public var writeBehind = true
    /// Size of the zone's `journal`, where small commits are made durable without growing a
    /// file (see `ZoneStorage`); 0 makes every commit sync the log itself.
    public var journalBytes: Int64 = 128 << 10
    /// A batch with this many record files or more is written by two threads (`Int.max`:
    /// always one).
    public var parallelFilesFrom = 64
    /// Zones' index files a store object keeps open at once; past it, the one used longest ago
    /// is closed (its zone opens it again at its next use).
    public var openIndexFiles = 64
    public init() {}
}

/// One zone's files, as one process uses them.
///
/// A commit is one framed entry appended to `log.jsonl` and one `fdatasync`: the commit
/// point, after which the save is acknowledged. The synced file is the zone's `journal` when
/// the entry fits in it, else the log (see ZoneStorage+Journal.swift): a file that does not
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
/// byte-range lock on the apply marker (other processes' file writers), then `stateLock`
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
/// `@unchecked Sendable`: its only `var`s are `state`, behind `stateLock`, and the writer's
/// (`appendLog`, `journal`, `fenced`, `knownCheckpointSeq`), behind `writeLock`.
final class ZoneStorage: @unchecked Sendable {
    let directory: String
    let zoneID: ZoneID
    let tuning: ZoneTuning
    /// Whether this process reads the zone whole into memory or from its index file.
    let reading: ZoneReading
    let writer: FileWriter
    let io: any StorageIO

    let writeLock = NSLock()
    /// The log, kept open for appends between commits, with the inode it was opened at.
    /// Guarded by `writeLock`, not `stateLock`: only a committing writer touches it.
    private var appendLog: (fd: Int32, inode: UInt64)?
    /// The journal as this process last left it; guarded by `writeLock` like `appendLog`.
    var journal: Journal?
    /// Why the zone is closed to writers until the store is opened again (a failed sync, a
    /// damaged log); guarded by `writeLock` like `appendLog`.
    var fenced: CKError?
    /// The checkpoint `zone.json` last showed this process (-1: not read yet); guarded by
    /// `writeLock` like `appendLog`. Others may move it on; a stale value only makes the next
    /// checkpoint come early.
    var knownCheckpointSeq: Int64 = -1
    let applyLock = NSLock()
    /// Runs the write-behind applier, one block at a time.
    let applyQueue = DispatchQueue(label: "ckfs.zone.apply")
    /// The zone's index file as this opening has it open; its lock is its own (a leaf).
    let indexSlot: ZoneIndexSlot
    /// `zone.json` as this opening last read it; its lock is its own (a leaf).
    let metaFile: ZoneMetaFile
    /// The log entries this opening committed or read, for the zone's catalog to take in
    /// without reading the log; its lock is its own (a leaf).
    let entryFeed = LogEntryFeed()
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
    let firstFetchNames = Mutex<(epoch: String, seq: Int64, names: [String])?>(nil)
    /// A record file found damaged (it does not parse), its status then, and the error: a
    /// read of every record file fails at once with that error while the file is unchanged
    /// (``knownDamage()``), instead of reading the zone up to it again at every request. Its
    /// lock is its own (a leaf).
    let damagedRecordFile = Mutex<(path: String, status: Syscall.FileStatus, error: CKError)?>(nil)

    /// Guards `state`, held briefly, never across I/O that waits on another lock.
    let stateLock = NSLock()
    /// What this opening knows of the zone in memory (``ZoneState``).
    var state: ZoneState

    /// How a query answered from the index file found its page.
    enum QueryPlan: Sendable, Equatable {
        /// Walking the first sort key's values in order, testing each record.
        case sortOrder
        /// Finding the matches, then sorting them.
        case matchesSorted
    }

    var logPath: String { StoreLayout.logFile(directory) }
    var lockPath: String { StoreLayout.lockFile(directory) }
    var recordsPath: String { StoreLayout.recordsDirectory(directory) }

    /// `budget`: the bytes of parsed records this zone's cache shares with the store object's
    /// other zones; `openIndexFiles`: the index files they keep open together.
    init(directory: String, zoneID: ZoneID, io: any StorageIO, tuning: ZoneTuning, reading: ZoneReading = .inMemory,
         budget: RecordCacheBudget? = nil, openIndexFiles: OpenIndexFiles? = nil) {
        self.directory = directory
        self.zoneID = zoneID
        self.io = io
        self.writer = FileWriter(io: io)
        self.tuning = tuning
        self.reading = reading
        self.state = ZoneState(cache: RecordCache(budget: budget ?? RecordCacheBudget(limit: reading.cacheBytes),
                                                  limit: reading.cachedRecords(tuning.cachedRecords)))
        self.metaFile = ZoneMetaFile(path: StoreLayout.zoneFile(directory))
        self.lockFile = ZoneLockFile(path: StoreLayout.lockFile(directory), zoneName: zoneID.zoneName)
        self.indexSlot = ZoneIndexSlot(openFiles: openIndexFiles ?? OpenIndexFiles(limit: tuning.openIndexFiles))
    }

    deinit {
        state.cache.removeAll()
        if state.tailHold >= 0 { Syscall.close(state.tailHold) }
        if let appendLog { Syscall.close(appendLog.fd) }
        if let journal { Syscall.close(journal.fd) }
    }

    func locked<T, E>(_ body: () throws(E) -> T) throws(E) -> T {
        stateLock.lock()
        defer { stateLock.unlock() }
        return try body()
    }

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
        case .failure(let e) where e.errno == ENOTEMPTY || e.errno == EEXIST:
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
        locked { state.reset() }
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
        if !ignoringFence, let fenced { throw fenced }
        // The zone may have been deleted (and made again) since the lock file was opened: then
        // forget all of it and take the new zone's lock, once.
        for attempt in 0..<2 {
            // Compared with the inode of the very file locked: the one held may be another by now.
            let (fd, inode) = try lockFile.descriptorAndInode()
            try Syscall.flock(fd, LOCK_EX, path: lockPath).orThrow(.internalError, "cannot lock zone \(zoneID.zoneName)")
            if case .success(let st?) = Syscall.stat(lockPath), st.inode == inode {
                defer { _ = Syscall.flock(fd, LOCK_UN, path: lockPath) }
                return try body()
            }
            _ = Syscall.flock(fd, LOCK_UN, path: lockPath)
            // Set aside, not closed: a reader may be reading its markers.
            lockFile.retire()
            locked { state.reset() }
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
    func write<T>(_ body: (ZoneTransaction) throws(CKError) -> (LogEntry?, T),
                  committed: ((LogEntry) -> Void)? = nil) throws(CKError) -> T {
        try withLockFile { () throws(CKError) -> T in
            let fd = try lockFile.descriptor()
            var (marker, apply) = try recoverIfNeeded(fd)
            try refreshTail()
            try applyOthersEntries(upTo: marker, apply: apply)
            let txn = ZoneTransaction(storage: self, lastSeq: marker.seq, usage: marker.usage)
            let (entryOrNil, result) = try body(txn)
            guard var entry = entryOrNil else { return result }
            entry.seq = marker.seq + 1
            marker.busy = true
            try lockFile.writeCommitMarker(fd, marker)
            let (start, end, inode) = try appendDurably(entry)
            // Committed: the save is durable and is reported as done whatever happens next.
            // If the marker cannot be written, it stays busy and the next writer recovers.
            // The tail moves past the entry in the same step that takes it in: a reader that
            // found the tail past it but the cache without it read the version before it.
            locked {
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

    /// Appends an entry and makes it durable: the commit point. Returns where in the log it
    /// starts and ends, and the log's inode; the caller moves the tail past it.
    ///
    /// The log stays open between commits (an open and a close of its path were two of a
    /// save's ~25 system calls): `refreshTail()` stat'ed the path under the same lock just
    /// before, so a log replaced since (compaction, a zone made again) is opened anew.
    private func appendDurably(_ entry: LogEntry) throws(CKError) -> (start: Int64, end: Int64, inode: UInt64) {
        let frame = entry.frame()
        let pathInode = locked { state.tailInode }
        if let open = appendLog, open.inode != pathInode {
            Syscall.close(open.fd)
            appendLog = nil
        }
        let fd: Int32
        if let open = appendLog { fd = open.fd } else {
            fd = try Syscall.open(logPath, O_WRONLY | O_APPEND).orThrow(.internalError, "cannot open the log of zone \(zoneID.zoneName)")
        }
        let st: Syscall.FileStatus
        switch Syscall.fstat(fd, path: logPath) {
        case .success(let s): st = s
        case .failure(let e):
            if appendLog == nil { Syscall.close(fd) }
            throw CKError(.internalError, "cannot stat \(logPath)", cause: .system(e))
        }
        appendLog = (fd, st.inode)
        if case .failure(let e) = io.write(fd, frame, path: logPath) {
            // Nothing acknowledged; cut what may have been written so the log stays whole.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            throw CKError(.internalError, "cannot write the log of zone \(zoneID.zoneName); nothing was saved", cause: .system(e))
        }
        if case .failure(let e) = makeDurable(frame, seq: entry.seq, logFD: fd) {
            // Linux reports a failed writeback once and may drop the pages: never retry and
            // then acknowledge. Cut the entry off so a replay cannot apply a save reported as
            // failed, and fence the zone until the store is opened again.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            let error = CKError(.internalError, "the disk failed to store the log of zone \(zoneID.zoneName) (\(e.path.hasSuffix("/journal") ? "its journal" : "log.jsonl")); the zone is closed until the store is opened again (then `ckfs fsck`)", cause: .system(e))
            fenced = error
            throw error
        }
        return (st.size, st.size + Int64(frame.count), st.inode)
    }

    // MARK: Reading

    /// Takes in entries other processes appended since the last look, so the cache stays
    /// right. A partial last entry (an append in progress) is left for the next look; cutting
    /// a torn tail is recovery's job, under the lock.
    func refreshTail() throws(CKError) {
        if locked({ state.tailOffset < 0 }) { try recoverAfterRestartIfNeeded() }
        guard let st = try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)") else {
            locked { state.reset() }
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist")
        }
        let (inode, offset) = locked { (state.tailInode, state.tailOffset) }
        if offset < 0 || inode != st.inode || st.size < offset {
            // First look, or the log was compacted: nothing cached can be trusted.
            try startTail(at: st)
            return
        }
        guard st.size != offset else { return }
        noteLogRead(Int(st.size - offset))
        let entries = try LogScanner.readAppended(logPath, from: offset, to: st.size, zoneID: zoneID)
        locked {
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
        if case .success(let f) = Syscall.open(logPath, O_RDONLY) {
            if case .success(let held) = Syscall.fstat(f, path: logPath), held.inode == st.inode { hold = f } else { Syscall.close(f) }
        }
        let released = locked { () -> Int32 in
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
            noteLogRead(Int(size - from))
            let found = try LogScanner.readAppended(logPath, from: from, to: size, zoneID: zoneID)
            if let first = found.first, first.0.seq <= seq + 1 { return (found.filter { $0.0.seq > seq }, found.last!.end) }
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

    /// The current record, or nil: an entry the files do not hold yet, else the cache when
    /// the log says it is current, else the record file.
    ///
    /// A file read is cached only when it cannot be older than the log entries taken in so
    /// far: the commit marker was clean and no entry arrived meanwhile. Entries the files lack
    /// are answered from ``ZoneState/unapplied`` (looked at before the file, which the applier
    /// writes before it drops them), so a stale file is never read for them.
    func record(named name: String) throws(CKError) -> Record? {
        try refreshTail()
        return try currentRecord(named: name) { () throws(CKError) -> Bool in
            let (commit, apply) = lockFile.readMarkers(try lockFile.descriptor())
            if let apply { locked { state.noteApplied(apply.applied) } }
            return commit.map { !$0.busy } ?? false
        }
    }

    /// The current record as this process knows the log: from ``ZoneState/unapplied``, the
    /// cache, or the file. `beforeFileRead` runs only when the file is read, and says whether
    /// what it holds may be cached. A write transaction calls this directly: it has just taken
    /// in the log under the writer's lock and found the commit marker clean, so the two system
    /// calls and the marker parse of ``record(named:)`` would only repeat that.
    func currentRecord(named name: String, underWriteLock: Bool = false,
                       beforeFileRead: () throws(CKError) -> Bool) throws(CKError) -> Record? {
        let (pending, hit, seen, absent) = locked { (state.unapplied[name], state.cache[name], state.generation, state.knownNames.map { !$0.mayContain(name) } ?? false) }
        if let pending { return pending.record }
        if let hit { return hit }
        if absent { return nil }
        let cacheFileRead = try beforeFileRead()
        guard let record = try readRecordFile(name) else {
            if underWriteLock { try noteMissedProbe() }
            return nil
        }
        if cacheFileRead {
            locked { if state.generation == seen { state.cache.insert(record) } }
        }
        return record
    }

    /// Counts a probe that found no file; once the probes have cost about what a listing of
    /// the records folder will, lists it into ``ZoneState/knownNames``. Paying for probes until
    /// they add up to a listing is never much worse than the better of the two. A failed
    /// lookup costs 4-7 µs; a listing about 0.6 µs a name, or 20 ns a byte of the folder (35
    /// bytes a name), so a listing is worth about one probe per 8 names, 280 bytes of folder. A
    /// fixed threshold (64 probes) made a few hundred saves into a large zone pay for a listing
    /// they could not use up. Only under the writer's lock: no entry can be committed
    /// meanwhile, and the versions the files lack are taken before the listing (as
    /// ``recordNames()`` does), so a file the applier writes meanwhile is in one or the other.
    private func noteMissedProbe() throws(CKError) {
        let due = locked { () -> Bool in
            state.missedProbes += 1
            return state.knownNames == nil && state.missedProbes >= state.probesBeforeListing
        }
        guard due else { return }
        let folderBytes = (try Syscall.stat(recordsPath).orThrow(.internalError, "cannot stat \(recordsPath)"))?.size ?? 0
        let worth = max(ZoneState.minimumProbesBeforeListing, Int(folderBytes / 280))
        let (ready, seen, pending) = locked { () -> (Bool, UInt64, [String: ZoneState.Pending]) in
            state.probesBeforeListing = worth
            return (state.missedProbes >= worth, state.generation, state.unapplied)
        }
        guard ready else { return }
        // A pending deletion's name stays known: it only costs its save a look at the file.
        var names = KnownNames(try fileRecordNames())
        for (name, p) in pending where p.record != nil { names.insert(name) }
        locked { if state.generation == seen { state.knownNames = names } }
    }

    func readRecordFile(_ name: String) throws(CKError) -> Record? {
        let path = StoreLayout.recordFile(directory, name: name)
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return nil }
        do { return try Self.decodeRecordFile(bytes, path: path) } catch {
            return try readDamagedRecordFile(path)
        }
    }

    /// A record file that did not parse, read again with its status: when it still does not
    /// parse, that version of it is noted as damaged and the error thrown.
    private func readDamagedRecordFile(_ path: String) throws(CKError) -> Record? {
        guard let (bytes, status) = try Syscall.readFileAndStatus(path, times: true).orThrow(.internalError, "cannot read \(path)") else { return nil }
        do { return try Self.decodeRecordFile(bytes, path: path) } catch {
            damagedRecordFile.withLock { $0 = (path, status, error) }
            throw error
        }
    }

    /// The error of a damaged record file found earlier, while that file is the version that
    /// was found damaged (`ckfs fsck`, an edit or a save replaces it, and the zone is read again).
    func knownDamage() -> CKError? {
        guard let damaged = damagedRecordFile.withLock({ $0 }) else { return nil }
        if case .success(let now?) = Syscall.stat(damaged.path, times: true), now == damaged.status { return damaged.error }
        damagedRecordFile.withLock { if $0?.path == damaged.path { $0 = nil } }
        return nil
    }

    static func decodeRecordFile(_ bytes: [UInt8], path: String) throws(CKError) -> Record {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch {
            throw CKError(.internalError, "record file \(path) is not valid JSON; run `ckfs fsck`", cause: .syntax(error))
        }
        return try RecordCoding.decode(json, mode: .stored).record
    }

    /// Names of all records: the record files, with the saves and deletes the files do not
    /// hold yet.
    func recordNames() throws(CKError) -> [String] {
        try refreshTail()
        // The versions the files lack first, then the listing: a file written meanwhile is
        // then in one or the other.
        let pending = locked { state.unapplied }
        let files = try fileRecordNames()
        // Sorted already; only versions the files lack change the list.
        guard !pending.isEmpty else { return files }
        var names = Set(files)
        for (name, p) in pending {
            if p.record == nil { names.remove(name) } else { names.insert(name) }
        }
        return names.sorted()
    }

    /// The record names a first change fetch begun at log entry `seq` of the zone's `epoch`
    /// pages through, in order (an epoch and a sequence number name one state of the zone);
    /// records saved after it come in the changes after `seq`, deleted ones are skipped.
    func namesForFirstFetch(epoch: String, startedAt seq: Int64) throws(CKError) -> [String] {
        if let kept = firstFetchNames.withLock({ $0 }), kept.epoch == epoch, kept.seq == seq { return kept.names }
        let names = try recordNames()
        firstFetchNames.withLock { $0 = (epoch, seq, names) }
        return names
    }

    /// Names of the record files, from the directory, sorted. Each file name is made a record
    /// name as it is read: a folder of a million files never has a million file names held
    /// beside the record names.
    func fileRecordNames() throws(CKError) -> [String] {
        var names: [String] = []
        var long: [String] = []
        let listed = try Syscall.forEachName(in: recordsPath) { cName in
            let n = String(cString: cName)
            guard n.hasSuffix(".json"), !n.hasPrefix(FileWriter.tempPrefix) else { return }
            if let name = StoreLayout.recordName(fromFileName: n) { names.append(name) } else { long.append(n) }
        }.orThrow(.internalError, "cannot list \(recordsPath)")
        guard listed else { return [] }
        for n in long {
            // A name too long to spell in its file name: the file holds it.
            guard StoreLayout.isLongRecordFileName(n), let bytes = try? Syscall.readFile(recordsPath + "/" + n).get(),
                  let record = try? Self.decodeRecordFile(bytes, path: recordsPath + "/" + n),
                  StoreLayout.recordFileName(record.recordID.recordName) == n else { continue }
            names.append(record.recordID.recordName)
        }
        names.sort()
        return names
    }

    /// The deleteSelf edges in memory (built once per process, under the lock, then kept by the log).
    func withDeleteSelfEdges<T>(_ body: (inout DeleteSelfEdges) -> T) throws(CKError) -> T {
        if locked({ state.deleteSelfEdges == nil }) {
            let pending = locked { state.unapplied }
            var built = DeleteSelfEdges()
            for name in try fileRecordNames() {
                if let r = try readRecordFile(name) { built.insert(r) }
            }
            for (name, p) in pending {
                if let r = p.record { built.insert(r) } else { built.remove(name) }
            }
            locked { if state.deleteSelfEdges == nil { state.deleteSelfEdges = built } }
        }
        return locked { body(&state.deleteSelfEdges!) }
    }

    /// The history the log keeps: its entries in order, and the oldest sequence number a
    /// change token may name (the one before the first kept entry).
    struct History {
        var entries: [LogEntry]
        var start: Int64

        /// Entries after `seq`; nil when the log no longer reaches back that far.
        func entries(after seq: Int64) -> [LogEntry]? {
            seq >= start ? entries.filter { $0.seq > seq } : nil
        }

        /// The client change token of the last entry up to `seq` that gave one.
        func clientChangeToken(upTo seq: Int64) -> Data? {
            entries.last { $0.clientChangeToken != nil && $0.seq <= seq }?.clientChangeToken
        }
    }

    /// Reads and parses the whole log once.
    func history() throws(CKError) -> History {
        try recoverAfterRestartIfNeeded()
        let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        noteLogRead(bytes.count)
        let all = LogScanner.scan(bytes, baseOffset: 0, zoneID: zoneID).entries.map(\.0)
        if let first = all.first { return History(entries: all, start: first.seq - 1) }
        return History(entries: [], start: try peekMarker()?.seq ?? 0)
    }

    /// The entry numbered `seq` as the log holds it now; nil when it holds no such entry (never
    /// made, or compacted away). Reads a few pieces of the log (``LogSeeker``), not the history,
    /// and takes no lock: the log only grows at its end, compaction replaces it whole (the
    /// descriptor opened here keeps the file it opened), and recovery cuts only a torn tail,
    /// which holds no committed entry. A writer calls it after releasing the zone (the ancestor
    /// of a refused save), so other saves to the zone never wait for it.
    func loggedEntry(seq: Int64) throws(CKError) -> LogEntry? {
        try withLogSeeker { (seeker) throws(CKError) in try seeker.entry(seq: seq, zoneID: zoneID) } ?? nil
    }

    /// The time and device of entry `seq` as the log holds it now, as ``loggedEntry(seq:)``
    /// reads it but without parsing its records.
    func loggedStamp(seq: Int64) throws(CKError) -> LogEntry.Stamp? {
        try withLogSeeker { (seeker) throws(CKError) in try seeker.stamp(seq: seq, zoneID: zoneID) } ?? nil
    }

    /// Runs `body` with a ``LogSeeker`` on the log as it is now (its descriptor and size);
    /// nil when the zone has no log file.
    func withLogSeeker<T>(_ body: (inout LogSeeker) throws(CKError) -> T) throws(CKError) -> T? {
        let fd: Int32
        switch Syscall.open(logPath, O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == ENOENT: return nil
        case .failure(let e): throw CKError(.internalError, "cannot open \(logPath)", cause: .system(e))
        }
        defer { Syscall.close(fd) }
        let size = try Syscall.fstat(fd, path: logPath).orThrow(.internalError, "cannot stat \(logPath)").size
        var seeker = LogSeeker(fd: fd, path: logPath, size: size) { [self] n in noteLogRead(n) }
        return try body(&seeker)
    }

    /// Stores an asset's contents content-addressed (before the commit point), durably.
    func storeAsset(from path: String) throws(CKError) -> Asset {
        guard let bytes = try Syscall.readFile(path).orThrow(.assetFileNotFound, "cannot read asset file \(path)") else {
            throw CKError(.assetFileNotFound, "asset file \(path) does not exist; give the path of an existing file")
        }
        let checksum = AssetHasher.sha256Hex(bytes)
        let target = StoreLayout.assetFile(directory, checksum: checksum)
        if case .success(_?) = Syscall.stat(target) { return Asset(fileChecksum: checksum, size: Int64(bytes.count)) }
        try writer.replace(target, with: bytes, durable: true)
        return Asset(fileChecksum: checksum, size: Int64(bytes.count))
    }
}
