import Foundation
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
    public init() {}
}

/// One zone's files, as one process uses them (DESIGN §3).
///
/// A commit is one framed entry appended to `log.jsonl` and one `fdatasync`: the commit
/// point. Then the record files are replaced (temp file + rename, no fsync: the log holds
/// them) and the `lock` file's marker says they are applied. Every `checkpointEvery` entries
/// the file system is synced and `zone.json` notes the checkpoint; after a crash the entries
/// after the marker (same boot) or after the checkpoint (after a reboot) are replayed.
///
/// Locks, always taken in this order: `writeLock` (this process's writers), then the
/// `flock` on `lock` (other processes' writers), then `stateLock` (the in-memory state,
/// held briefly, never across I/O that waits on another lock).
final class ZoneStorage: @unchecked Sendable {
    let directory: String
    let zoneID: ZoneID
    let tuning: ZoneTuning
    let writer: FileWriter
    private let io: any StorageIO

    private let writeLock = NSLock()
    /// Guards every `var` below.
    private let stateLock = NSLock()
    private var tailInode: UInt64 = 0
    private var tailOffset: Int64 = -1
    private var cache: [String: Record] = [:]
    /// Bumped whenever the cache takes in log entries or is reset: a record read from its file
    /// is cached only if no entry arrived meanwhile.
    private var generation: UInt64 = 0
    private var index: ZoneIndex?
    private var fenced: CKError?
    private var lockFD: Int32 = -1
    private var lockInode: UInt64 = 0
    /// The checkpoint `zone.json` last showed this process (-1: not read yet). Others may move
    /// it on; a stale value only makes the next checkpoint come early.
    private var knownCheckpointSeq: Int64 = -1

    var logPath: String { StoreLayout.logFile(directory) }
    var lockPath: String { StoreLayout.lockFile(directory) }
    var recordsPath: String { StoreLayout.recordsDirectory(directory) }

    init(directory: String, zoneID: ZoneID, io: any StorageIO, tuning: ZoneTuning) {
        self.directory = directory
        self.zoneID = zoneID
        self.io = io
        self.writer = FileWriter(io: io)
        self.tuning = tuning
    }

    deinit { if lockFD >= 0 { Syscall.close(lockFD) } }

    private func locked<T, E>(_ body: () throws(E) -> T) throws(E) -> T {
        stateLock.lock()
        defer { stateLock.unlock() }
        return try body()
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
        let marker = AppliedMarker(bootID: AppliedMarker.currentBootID, seq: 0, usage: 0, busy: false)
        try writer.replace(StoreLayout.lockFile(temp), with: marker.bytes(), durable: true)
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
            let (parent, name) = StoreLayout.split(directory)
            let grave = parent + "/.deleted-" + name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            try io.rename(directory, grave).orThrow(.internalError, "cannot delete zone \(zoneID.zoneName)")
            try writer.syncDirectory(parent)
            Self.removeTree(grave)
        }
        locked { cache = [:]; index = nil; tailOffset = -1; generation &+= 1 }
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
        guard let meta = try ZoneMeta.read(StoreLayout.zoneFile(directory)) else {
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist; create it with `ckfs zone create \(zoneID.zoneName)`")
        }
        return meta
    }

    // MARK: The writer's lock

    /// Runs `body` holding this process's writer lock and the zone's `flock`, after checking
    /// that the zone was not deleted meanwhile.
    private func withLockFile<T>(ignoringFence: Bool = false, _ body: () throws(CKError) -> T) throws(CKError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        if !ignoringFence, let fenced = locked({ fenced }) { throw fenced }
        let fd = try lockFile()
        try Syscall.flock(fd, LOCK_EX, path: lockPath).orThrow(.internalError, "cannot lock zone \(zoneID.zoneName)")
        defer { _ = Syscall.flock(fd, LOCK_UN, path: lockPath) }
        // The zone may have been deleted (and made again) while we waited.
        guard case .success(let st?) = Syscall.stat(lockPath), st.inode == lockInode else {
            locked { if lockFD >= 0 { Syscall.close(lockFD) }; lockFD = -1; cache = [:]; index = nil; tailOffset = -1; generation &+= 1 }
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) was deleted")
        }
        return try body()
    }

    private func lockFile() throws(CKError) -> Int32 {
        if let fd = locked({ lockFD >= 0 ? lockFD : nil }) { return fd }
        let fd: Int32
        switch Syscall.open(lockPath, O_RDWR) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == ENOENT:
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist; create it with `ckfs zone create \(zoneID.zoneName)`")
        case .failure(let e): throw CKError(.internalError, "cannot open the lock of zone \(zoneID.zoneName)", cause: .system(e))
        }
        let inode = try Syscall.fstat(fd, path: lockPath).orThrow(.internalError, "cannot stat \(lockPath)").inode
        locked { lockFD = fd; lockInode = inode }
        return fd
    }

    private func readMarker(_ fd: Int32) -> AppliedMarker? {
        guard case .success(let bytes) = Syscall.pread(fd, count: AppliedMarker.size, offset: 0, path: lockPath) else { return nil }
        return AppliedMarker(bytes: bytes)
    }

    private func writeMarker(_ fd: Int32, _ marker: AppliedMarker) throws(CKError) {
        try Syscall.pwriteAll(fd, marker.bytes(), offset: 0, path: lockPath).orThrow(.internalError, "cannot write \(lockPath)")
    }

    /// The applied marker, read without the lock (for usage and the newest sequence number).
    func peekMarker() throws(CKError) -> AppliedMarker? {
        let fd = try lockFile()
        return readMarker(fd)
    }

    // MARK: Writing

    /// Runs a write transaction: `body` sees the zone as committed so far and returns the
    /// entry to commit (nil commits nothing). The entry is durable when this returns.
    /// `committed` runs after the commit, the zone still locked, with the entry as committed.
    func write<T>(_ body: (ZoneTransaction) throws(CKError) -> (LogEntry?, T),
                  committed: ((LogEntry) -> Void)? = nil) throws(CKError) -> T {
        try withLockFile { () throws(CKError) -> T in
            let fd = try lockFile()
            var marker = try recoverIfNeeded(fd)
            try refreshTail()
            let txn = ZoneTransaction(storage: self, lastSeq: marker.seq, usage: marker.usage)
            let (entryOrNil, result) = try body(txn)
            guard var entry = entryOrNil else { return result }
            entry.seq = marker.seq + 1
            marker.busy = true
            try writeMarker(fd, marker)
            try appendDurably(entry)
            // Committed: the save is durable and is reported as done whatever happens next. If
            // a record file cannot be replaced now, the marker stays busy and the next writer
            // (or `ckfs fsck`) replays the entry.
            do throws(CKError) {
                try apply(entry)
                marker = AppliedMarker(bootID: AppliedMarker.currentBootID, seq: entry.seq, usage: entry.usage, busy: false)
                try writeMarker(fd, marker)
                try checkpointIfDue(marker)
            } catch {
                locked { absorb(entry) }
            }
            committed?(entry)
            return result
        }
    }

    private func appendDurably(_ entry: LogEntry) throws(CKError) {
        let frame = entry.frame()
        let fd = try Syscall.open(logPath, O_WRONLY | O_APPEND).orThrow(.internalError, "cannot open the log of zone \(zoneID.zoneName)")
        defer { Syscall.close(fd) }
        let st = try Syscall.fstat(fd, path: logPath).orThrow(.internalError, "cannot stat \(logPath)")
        if case .failure(let e) = io.write(fd, frame, path: logPath) {
            // Nothing acknowledged; cut what may have been written so the log stays whole.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            throw CKError(.internalError, "cannot write the log of zone \(zoneID.zoneName); nothing was saved", cause: .system(e))
        }
        if case .failure(let e) = io.sync(fd, path: logPath, dataOnly: true) {
            // Linux reports a failed writeback once and may drop the pages: never retry and
            // then acknowledge. Cut the entry off so a replay cannot apply a save reported as
            // failed, and fence the zone until the store is opened again.
            _ = Syscall.ftruncate(fd, st.size, path: logPath)
            let error = CKError(.internalError, "the disk failed to store the log of zone \(zoneID.zoneName); the zone is closed until the store is opened again (then `ckfs fsck`)", cause: .system(e))
            locked { fenced = error }
            throw error
        }
        locked {
            if tailOffset == st.size { tailOffset = st.size + Int64(frame.count) }
            tailInode = st.inode
        }
    }

    /// Puts an entry's records into their files and into the in-memory state.
    private func apply(_ entry: LogEntry) throws(CKError) {
        try writeFiles(of: entry)
        locked { absorb(entry) }
    }

    /// Replaces the record files an entry saves and removes those it deletes (idempotent).
    private func writeFiles(of entry: LogEntry) throws(CKError) {
        for record in entry.saved {
            try writer.replace(StoreLayout.recordFile(directory, name: record.recordID.recordName),
                               with: RecordCoding.fileBytes(record), durable: false)
        }
        for d in entry.deleted {
            try Syscall.unlink(StoreLayout.recordFile(directory, name: d.recordName)).orThrow(.internalError, "cannot delete record file \(d.recordName)")
        }
    }

    /// Updates cache and index with an entry (stateLock held).
    private func absorb(_ entry: LogEntry) {
        generation &+= 1
        for d in entry.deleted {
            cache[d.recordName] = nil
            index?.remove(d.recordName)
        }
        for record in entry.saved {
            cacheInsert(record)
            index?.insert(record)
        }
    }

    private func cacheInsert(_ record: Record) {
        if cache.count >= tuning.cachedRecords {
            // Drop an eighth, in the dictionary's (arbitrary) order: cheap and good enough.
            for key in cache.keys.prefix(max(1, tuning.cachedRecords / 8)) { cache[key] = nil }
        }
        cache[record.recordID.recordName] = record
    }

    // MARK: Recovery

    /// With the lock held: replays committed entries that a crashed writer did not apply,
    /// cuts a torn log tail, removes stray temporary files. Returns the current marker.
    private func recoverIfNeeded(_ fd: Int32) throws(CKError) -> AppliedMarker {
        if let marker = readMarker(fd), !marker.busy, marker.bootID == AppliedMarker.currentBootID {
            return marker
        }
        var report = RecoveryReport()
        return try recover(fd, report: &report)
    }

    /// What recovery found and did, for `fsck`.
    struct RecoveryReport {
        var truncatedBytes: Int64 = 0
        var replayedEntries = 0
        var removedTempFiles = 0
        var damage: String?
        /// The whole entries of the log, after any torn tail was cut.
        var entries: [LogEntry] = []
    }

    @discardableResult
    func recover(_ fd: Int32, report: inout RecoveryReport) throws(CKError) -> AppliedMarker {
        let meta = try readMeta()
        let old = readMarker(fd)
        let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        let (entries, outcome) = LogScanner.scan(bytes, baseOffset: 0, zoneID: zoneID)
        switch outcome {
        case .clean: break
        case .tornTail(let at):
            let lfd = try Syscall.open(logPath, O_WRONLY).orThrow(.internalError, "cannot open \(logPath)")
            defer { Syscall.close(lfd) }
            try Syscall.ftruncate(lfd, at, path: logPath).orThrow(.internalError, "cannot cut the torn end of \(logPath)")
            try io.sync(lfd, path: logPath, dataOnly: true).orThrow(.internalError, "cannot sync \(logPath)")
            report.truncatedBytes = Int64(bytes.count) - at
        case .damaged(let at, let reason):
            let error = CKError(.internalError, "the log of zone \(zoneID.zoneName) is damaged at byte \(at) (\(reason)) with whole entries after it; restore the zone from a backup or move log.jsonl aside and run `ckfs fsck`")
            report.damage = error.message
            locked { fenced = error }
            throw error
        }
        // Same boot: page-cache writes of earlier entries are there; replay from the marker.
        // Another boot (or no marker): replay from the checkpoint.
        let from: Int64
        if let old, old.bootID == AppliedMarker.currentBootID { from = old.seq } else { from = meta.checkpointSeq }
        var replayed = 0
        for (entry, _) in entries where entry.seq > from {
            try writeFiles(of: entry)
            replayed += 1
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
        let marker = AppliedMarker(bootID: AppliedMarker.currentBootID, seq: seq, usage: usage, busy: false)
        if replayed > 0 || old?.bootID != marker.bootID {
            // Make replayed files durable before saying they are applied.
            let dfd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY).orThrow(.internalError, "cannot open \(directory)")
            defer { Syscall.close(dfd) }
            try Syscall.syncfs(dfd, path: directory).orThrow(.internalError, "cannot sync zone \(zoneID.zoneName)")
        }
        try writeMarker(fd, marker)
        locked { cache = [:]; index = nil; tailOffset = -1; generation &+= 1 }
        report.replayedEntries = replayed
        report.removedTempFiles = removed
        report.entries = entries.map(\.0)
        return marker
    }

    /// For `fsck`: runs recovery, then `body` with what it found, in one hold of the lock.
    /// Recovery is what a fenced zone waits for, so it runs on one and lifts the fence.
    func withRecovery<T>(_ body: (RecoveryReport) throws(CKError) -> T) throws(CKError) -> T {
        defer { locked { cache = [:]; index = nil; tailOffset = -1; generation &+= 1 } }
        return try withLockFile(ignoringFence: true) { () throws(CKError) -> T in
            var report = RecoveryReport()
            try recover(try lockFile(), report: &report)
            locked { fenced = nil }
            return try body(report)
        }
    }

    /// Sets the usage figure in the marker to what `fsck` counted (under the lock).
    func fixUsage(_ usage: Int64, _ result: inout CheckResult) throws(CKError) {
        let fd = try lockFile()
        guard var marker = readMarker(fd) else { return }
        guard marker.usage != usage else { return }
        result.repaired.append("zone \(zoneID.zoneName): usage was \(marker.usage) bytes, counted \(usage); corrected")
        marker.usage = usage
        try writeMarker(fd, marker)
    }

    // MARK: Checkpoint and compaction

    private func checkpointIfDue(_ marker: AppliedMarker) throws(CKError) {
        // The common case decides from memory: the tail offset is the log's size right after
        // our own append.
        let (known, tail) = locked { (knownCheckpointSeq, tailOffset) }
        if known >= 0, tail >= 0, marker.seq - known < tuning.checkpointEvery, tail <= tuning.compactLogBytes { return }
        var meta = try readMeta()
        locked { knownCheckpointSeq = meta.checkpointSeq }
        let logSize = (try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)"))?.size ?? 0
        guard marker.seq - meta.checkpointSeq >= tuning.checkpointEvery || logSize > tuning.compactLogBytes else { return }
        let dfd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY).orThrow(.internalError, "cannot open \(directory)")
        defer { Syscall.close(dfd) }
        try Syscall.syncfs(dfd, path: directory).orThrow(.internalError, "cannot sync zone \(zoneID.zoneName)")
        let logBytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        let entries = LogScanner.scan(logBytes, baseOffset: 0, zoneID: zoneID).entries
        meta.checkpointSeq = marker.seq
        meta.usage = marker.usage
        if let token = entries.last(where: { $0.0.clientChangeToken != nil })?.0.clientChangeToken { meta.clientChangeToken = token }
        try writer.replace(StoreLayout.zoneFile(directory), with: JSONWriter.pretty(meta.json()), durable: true)
        locked { knownCheckpointSeq = meta.checkpointSeq }
        guard logSize > tuning.compactLogBytes else { return }
        // Keep the newest entries that fit in half the limit; tokens older than the first kept
        // entry then fail with changeTokenExpired (R13).
        var start = entries.count
        var kept: Int64 = 0
        var previousEnd: Int64 = 0
        let ends = entries.map(\.end)
        while start > 0 {
            previousEnd = start - 1 > 0 ? ends[start - 2] : 0
            let size = ends[start - 1] - previousEnd
            if kept + size > tuning.compactLogBytes / 2 && start < entries.count { break }
            kept += size
            start -= 1
        }
        let cut = start > 0 ? Int(ends[start - 1]) : 0
        try writer.replace(logPath, with: Array(logBytes[cut...]), durable: true)
        locked { tailOffset = -1 }
    }

    // MARK: Reading

    /// Takes in entries other processes appended since the last look, so the cache stays
    /// right. A partial last entry (an append in progress) is left for the next look; cutting
    /// a torn tail is recovery's job, under the lock.
    func refreshTail() throws(CKError) {
        guard let st = try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)") else {
            locked { cache = [:]; index = nil; tailOffset = -1; generation &+= 1 }
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist")
        }
        let (inode, offset) = locked { (tailInode, tailOffset) }
        if offset < 0 || inode != st.inode {
            // First look, or the log was compacted: nothing cached can be trusted.
            locked { cache = [:]; index = nil; tailInode = st.inode; tailOffset = st.size; generation &+= 1 }
            return
        }
        guard st.size != offset else { return }
        if st.size < offset {
            locked { cache = [:]; index = nil; tailOffset = st.size; generation &+= 1 }
            return
        }
        let entries = try LogScanner.readAppended(logPath, from: offset, to: st.size, zoneID: zoneID)
        locked {
            for (entry, end) in entries {
                absorb(entry)
                tailOffset = end
            }
        }
    }

    /// The current record, or nil. Uses the cache when the log says it is current.
    ///
    /// A file read is cached only when it cannot be older than the log entries taken in so
    /// far: the marker said "clean" (every appended entry applied) after the tail was read,
    /// and no entry arrived since. Otherwise a writer between its commit point and its file
    /// replace could leave a stale version cached for good, and a save based on it would
    /// pass the change-tag check: a lost update.
    func record(named name: String) throws(CKError) -> Record? {
        try refreshTail()
        let (hit, seen) = locked { (cache[name], generation) }
        if let hit { return hit }
        let marker = try peekMarker()
        guard let record = try readRecordFile(name) else { return nil }
        if let marker, !marker.busy {
            locked { if generation == seen { cacheInsert(record) } }
        }
        return record
    }

    func readRecordFile(_ name: String) throws(CKError) -> Record? {
        let path = StoreLayout.recordFile(directory, name: name)
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return nil }
        return try Self.decodeRecordFile(bytes, path: path)
    }

    static func decodeRecordFile(_ bytes: [UInt8], path: String) throws(CKError) -> Record {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch {
            throw CKError(.internalError, "record file \(path) is not valid JSON; run `ckfs fsck`", cause: .syntax(error))
        }
        return try RecordCoding.decode(json, mode: .stored).record
    }

    /// Names of all records, from the directory.
    func recordNames() throws(CKError) -> [String] {
        let names = try Syscall.listDirectory(recordsPath).orThrow(.internalError, "cannot list \(recordsPath)") ?? []
        return names.compactMap { n in
            guard n.hasSuffix(".json"), !n.hasPrefix(FileWriter.tempPrefix) else { return nil }
            return StoreLayout.decode(String(n.dropLast(5)))
        }.sorted()
    }

    /// The index of references (built once per process, under the lock, then kept by the log).
    fileprivate func withIndex<T>(_ body: (inout ZoneIndex) -> T) throws(CKError) -> T {
        if locked({ index == nil }) {
            var built = ZoneIndex()
            for name in try recordNames() {
                if let r = try readRecordFile(name) { built.insert(r) }
            }
            locked { if index == nil { index = built } }
        }
        return locked { body(&index!) }
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

        /// The client change token of the last entry up to `seq` that gave one (M7).
        func clientChangeToken(upTo seq: Int64) -> Data? {
            entries.last { $0.clientChangeToken != nil && $0.seq <= seq }?.clientChangeToken
        }
    }

    /// Reads and parses the whole log once.
    func history() throws(CKError) -> History {
        let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        let all = LogScanner.scan(bytes, baseOffset: 0, zoneID: zoneID).entries.map(\.0)
        if let first = all.first { return History(entries: all, start: first.seq - 1) }
        return History(entries: [], start: try peekMarker()?.seq ?? 0)
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

/// The view a write transaction has of its zone, with the lock held.
final class ZoneTransaction {
    let storage: ZoneStorage
    let lastSeq: Int64
    let usage: Int64

    init(storage: ZoneStorage, lastSeq: Int64, usage: Int64) {
        self.storage = storage
        self.lastSeq = lastSeq
        self.usage = usage
    }

    func record(_ name: String) throws(CKError) -> Record? { try storage.record(named: name) }

    /// Records holding a `deleteSelf` reference to `name`.
    func referrers(of name: String) throws(CKError) -> [String] {
        try storage.withIndex { $0.referrers[name].map { Array($0) } ?? [] }
    }

    func storeAsset(from path: String) throws(CKError) -> Asset { try storage.storeAsset(from: path) }
}

/// What the engine keeps in memory of a whole zone: `deleteSelf` edges for cascades (M5).
struct ZoneIndex {
    var referrers: [String: Set<String>] = [:]
    var targets: [String: [String]] = [:]

    mutating func insert(_ record: Record) {
        let name = record.recordID.recordName
        remove(name, keepReferrers: true)
        let ts = record.deleteSelfReferences.map(\.target)
        if !ts.isEmpty { targets[name] = ts }
        for t in ts { referrers[t, default: []].insert(name) }
    }

    mutating func remove(_ name: String, keepReferrers: Bool = false) {
        for t in targets[name] ?? [] {
            referrers[t]?.remove(name)
            if referrers[t]?.isEmpty == true { referrers[t] = nil }
        }
        targets[name] = nil
    }
}
