import Foundation

/// The file backend's ``ZoneCatalog``: one zone kept right by following its log, with what
/// changed since the last look.
///
/// How it holds the records follows the store's ``ZoneReading``: in memory, every record,
/// read from the files once and then kept by the log; indexed, none: names and types come
/// from the zone's index file and each record from the zone's storage (its files, the log
/// entries they lack, a bounded cache), so memory does not grow with the zone. An indexed
/// catalog whose index cannot be used (a nearly full disk, damage that cannot be repaired, or
/// another process writing it for longer than `indexWaitMilliseconds`) holds the records in
/// memory, for as long as the catalog lives.
///
/// Change tags are log sequence numbers, so a record file with tag T already holds every
/// entry up to T for that record: loading the files and then replaying the log entries after
/// the apply marker (read before the files), skipping entries not newer than what is loaded,
/// gives the zone as of the log's end even while writers run (a writer between its commit
/// point and its file replace only leaves a file behind the log, and the replay covers it).
final class ZoneFileCatalog: ZoneCatalog, @unchecked Sendable {
    let zoneName: String
    private let storage: ZoneFolder

    /// Makes ``refresh()`` one at a time: two first looks at once each loaded the whole zone
    /// (the mount's first listing and its watcher, both at a zone's first change), and both
    /// reported it reloaded. Taken before `lock`, never inside it.
    private let refreshLock = NSLock()
    /// Guards every `var` below.
    private let lock = NSLock()
    /// Whether `records` holds the zone (always, once refreshed, when the store reads zones
    /// in memory).
    private var loaded = false
    /// The records were loaded outside a refresh, taking in entries no refresh reported: the
    /// next refresh reports the zone reloaded.
    private var loadedUnreported = false
    private var records: [String: Record] = [:]
    /// How many records of each type `records` holds.
    private var typeCounts: [String: Int] = [:]
    /// Records of one type in one query order, for queries (``SortedRecords``); at most
    /// ``sortedLimit``, the least recently used dropped first.
    private var sorted: [SortedKey: SortedRecords] = [:]
    private var useClock: UInt64 = 0
    private var lastSeq: Int64 = 0
    private var logInode: UInt64 = 0
    private var logOffset: Int64 = -1
    /// Told of every change any refresh takes in, by who listens (``listen(as:_:)``).
    private var listeners: [UInt64: @Sendable (ZoneCatalogChange) -> Void] = [:]

    init(storage: ZoneFolder) {
        self.zoneName = storage.zoneID.zoneName
        self.storage = storage
        storage.entryFeed.open()
    }

    /// Takes in what was written since the last look. Every listener (``listen(as:_:)``) is
    /// told of a change before any other refresh can return: what a reader keeps of the
    /// records (the view's rendered text) is dropped before another thread's refresh finds
    /// nothing new and reads it. A change another refresh took in is not reported again, so a
    /// reader that keeps what it read listens.
    @discardableResult
    func refresh() throws(CKError) -> ZoneCatalogChange {
        refreshLock.lock()
        defer { refreshLock.unlock() }
        var change = try takeIn()
        if change != .zoneGone, lock.withLock({ loadedUnreported }) { change = .reloaded }
        let told = lock.withLock { () -> [@Sendable (ZoneCatalogChange) -> Void] in
            loadedUnreported = false
            return Array(listeners.values)
        }
        if change != .none { for listener in told { listener(change) } }
        return change
    }

    /// Has `listener` told of every change any refresh of this catalog takes in (the view's,
    /// a query's in the same process), under the refresh's lock: it must take no lock the
    /// refreshing thread may hold, nor refresh. One listener per `id`; false when `id`
    /// listens already.
    @discardableResult
    func listen(as id: UInt64, _ listener: @escaping @Sendable (ZoneCatalogChange) -> Void) -> Bool {
        lock.withLock {
            guard listeners[id] == nil else { return false }
            listeners[id] = listener
            return true
        }
    }

    /// ``refresh()``'s work, refresh lock held.
    private func takeIn() throws(CKError) -> ZoneCatalogChange {
        let path = storage.logPath
        guard let st = try Syscall.stat(path).orThrow(.internalError, "cannot stat \(path)") else {
            let had = lock.withLock { () -> Bool in
                let had = logOffset >= 0
                (records, typeCounts, sorted, logOffset, lastSeq, loaded) = ([:], [:], [:], -1, 0, false)
                return had
            }
            if had { return .zoneGone }
            throw CKError(.zoneNotFound, "zone \(zoneName) does not exist")
        }
        let (inode, offset, seq) = lock.withLock { (logInode, logOffset, lastSeq) }
        if offset >= 0, inode == st.inode, st.size >= offset {
            if st.size == offset { return .none }
            // Entries come parsed from the zone's storage: this process's own commits, and
            // others' appends, which the storage takes in now, as its next record read or
            // commit would anyway, so each is parsed once in the process. (Held in memory, the
            // records the storage keeps are the catalog's own, not copies: both take the same
            // parsed entry.) Should that fail, the log is read here, which reports it.
            try? storage.refreshTail()
            var entries = storage.entryFeed.take(from: offset, inode: inode, upTo: st.size)
            let readFrom = entries.last?.end ?? offset
            if readFrom < st.size {
                storage.noteLogRead(Int(st.size - readFrom))
                entries += try LogScanner.readAppended(path, from: readFrom, to: st.size, zoneID: storage.zoneID)
            }
            return Self.change(absorb(entries, inode: st.inode))
        }
        // The log was replaced (compaction) or never read: if the new log still reaches back
        // to what we saw, taking in its entries after that is enough, found by bisecting it
        // (``LogSeeker``) instead of reading the whole new log; otherwise load everything again.
        if offset >= 0, let (entries, following) = try entriesAfterCompaction(seq: seq, of: st) {
            return Self.change(absorb(entries, inode: st.inode, following: following))
        }
        if storage.reading.readsIndex { try follow() } else { try reload() }
        return .reloaded
    }

    /// The entries after `seq` in the log `st` describes, and where they end, when that log
    /// reaches back to `seq` (its first entry is numbered `seq + 1` or less); nil when it does
    /// not, or when the file at the path is no longer that log.
    private func entriesAfterCompaction(seq: Int64, of st: Syscall.FileStatus) throws(CKError) -> ([(LogEntry, end: Int64)], Int64)? {
        try storage.withLogSeeker { (seeker) throws(CKError) -> ([(LogEntry, end: Int64)], Int64)? in
            guard case .success(let open) = Syscall.fstat(seeker.fd, path: seeker.path), open.inode == st.inode, seeker.size >= st.size else { return nil }
            let start: Int64
            do throws(CKError) {
                // A log without entries reaches back to no number: `committed` is past all.
                guard let found = try seeker.pageStart(after: seq, committed: .max) else { return nil }
                start = found
            } catch where error.code == .changeTokenExpired {
                return nil
            }
            guard start < st.size else { return ([], start) }
            storage.noteLogRead(Int(st.size - start))
            let entries = try LogScanner.readAppended(seeker.fd, path: seeker.path, from: start, to: st.size, zoneID: storage.zoneID)
            return (entries, entries.last?.end ?? start)
        } ?? nil
    }

    /// What the absorbed entries changed; nil when a deletion named no record type (entries
    /// older than the type in deletions) and the catalog held no records to find it in.
    private static func change(_ changed: [String: String]?) -> ZoneCatalogChange {
        guard let changed else { return .reloaded }
        return changed.isEmpty ? .none : .records(changed)
    }

    /// Starts following the log at its last whole entry with no records in memory: the index
    /// answers for the records up to there (``ZoneFolder/currentIndex()`` brings it up to
    /// the log's end when asked). The entries after the apply marker are read only to find
    /// where they end, an entry boundary the log's size may not be while a writer appends.
    private func follow() throws(CKError) {
        let (applied, st) = try appliedAndLog()
        let (entries, following) = try storage.entriesFollowing(applied?.applied ?? Int64.min, from: applied?.end ?? -1, to: st.size)
        lock.withLock {
            (records, typeCounts, sorted, loaded) = ([:], [:], [:], false)
            lastSeq = max(entries.last?.0.seq ?? 0, applied?.applied ?? 0)
            logInode = st.inode
            logOffset = following
        }
    }

    /// The apply marker and then the log's state, after recovery: read in this order, the
    /// entries the record files may lack are those after the marker, up to the log's end.
    private func appliedAndLog() throws(CKError) -> (ApplyMarker?, Syscall.FileStatus) {
        try storage.recoverAfterRestartIfNeeded()
        let applied = storage.currentApplyMarker()
        let path = storage.logPath
        guard let st = try Syscall.stat(path).orThrow(.internalError, "cannot stat \(path)") else {
            throw CKError(.zoneNotFound, "zone \(zoneName) does not exist")
        }
        return (applied, st)
    }

    /// Loads the records into memory when the catalog follows the log without them (an
    /// indexed catalog whose index cannot be used, or a question only the records answer).
    private func loadIfNeeded() throws(CKError) {
        refreshLock.lock()
        defer { refreshLock.unlock() }
        let (isLoaded, following) = lock.withLock { (loaded, logOffset >= 0) }
        if isLoaded { return }
        try reload()
        if following { lock.withLock { loadedUnreported = true } }
    }

    /// How long an indexed catalog waits for another process writing the zone's index before
    /// it loads the records instead: making the index of a million records takes tens of
    /// seconds, and loading them would take gigabytes.
    static let indexWaitMilliseconds: Int32 = 180_000

    /// `body`'s answer from the zone's index, brought up to date, when this catalog answers
    /// from it (``ZoneFolder/withCurrentIndex(waitingMilliseconds:_:)``); nil when it holds the
    /// records in memory (then loaded).
    private func fromIndex<T>(_ body: (ZoneIndexFile.Reader) throws(CKError) -> T) throws(CKError) -> T? {
        if storage.reading.readsIndex, !lock.withLock({ loaded }),
           let answer = try storage.withCurrentIndex(waitingMilliseconds: Self.indexWaitMilliseconds, { (index) throws(CKError) in try index.read(body) }) {
            return answer
        }
        try loadIfNeeded()
        return nil
    }

    /// Loads the record files and then replays only the log entries they may not hold yet:
    /// those after the apply marker, read before the files, so an entry the applier writes
    /// meanwhile is in the files or among the replayed ones. Replaying the whole kept log
    /// parsed every record in it a second time (tens of MB at 100,000 records) only to skip
    /// it; that was a third of the mount daemon's peak memory after `ls` of a large zone.
    private func reload() throws(CKError) {
        if let damage = storage.knownDamage() { throw damage }
        storage.observers.zoneRead?()
        let (applied, st) = try appliedAndLog()
        var loaded: [String: Record] = [:]
        for name in try storage.recordNames() {
            if let r = try storage.readRecordFile(name) { loaded[name] = r }
        }
        let (entries, following) = try storage.entriesFollowing(applied?.applied ?? Int64.min, from: applied?.end ?? -1, to: st.size)
        lock.withLock {
            records = loaded
            self.loaded = true
            typeCounts = [:]
            for r in loaded.values { typeCounts[r.recordType, default: 0] += 1 }
            sorted = [:]
            let newestTag = loaded.values.compactMap { $0.recordChangeTag.flatMap { Int64($0) } }.max() ?? 0
            lastSeq = max(newestTag, applied?.applied ?? 0)
        }
        _ = absorb(entries, inode: st.inode, following: following)
    }

    /// Applies entries read from the log with inode `inode`, ending where the last one ends,
    /// or, for a load, at `following` (where the whole entries read end: some before it may
    /// have been skipped); returns the records they changed (name → type).
    private func absorb(_ entries: [(LogEntry, end: Int64)], inode: UInt64, following: Int64? = nil) -> [String: String]? {
        lock.withLock {
            var changed: [String: String]? = [:]
            logInode = inode
            for (entry, end) in entries {
                if loaded {
                    changed?.merge(apply(entry)) { $1 }
                } else {
                    changed = changed.flatMap { Self.names(in: entry, adding: $0) }
                    lastSeq = max(lastSeq, entry.seq)
                }
                logOffset = end
            }
            // A load starts over: where the catalog was in a log compacted since means nothing.
            if let following { logOffset = following }
            if logOffset < 0 { logOffset = 0 }
            return changed
        }
    }

    /// `changed` with the records an entry saves or deletes (name → type); nil when a
    /// deletion does not say its record's type.
    private static func names(in entry: LogEntry, adding changed: [String: String]) -> [String: String]? {
        var changed = changed
        for d in entry.deleted {
            guard let type = d.recordType else { return nil }
            changed[d.recordName] = type
        }
        for r in entry.saved { changed[r.recordID.recordName] = r.recordType }
        return changed
    }

    /// Applies one entry unless the loaded state is already newer. Lock held.
    private func apply(_ entry: LogEntry) -> [String: String] {
        var changed: [String: String] = [:]
        for d in entry.deleted {
            if let old = records[d.recordName], (old.recordChangeTag.flatMap { Int64($0) } ?? 0) < entry.seq {
                records[d.recordName] = nil
                changed[d.recordName] = old.recordType
                count(old, by: -1)
                noteSorted(old: old, new: nil)
            }
        }
        for r in entry.saved {
            let name = r.recordID.recordName
            let old = records[name]
            let current = old.flatMap { $0.recordChangeTag.flatMap { Int64($0) } } ?? 0
            if current < entry.seq {
                records[name] = r
                changed[name] = r.recordType
                if let old { count(old, by: -1) }
                count(r, by: 1)
                noteSorted(old: old, new: r)
            }
        }
        lastSeq = max(lastSeq, entry.seq)
        return changed
    }

    /// Lock held.
    private func count(_ r: Record, by delta: Int) {
        let n = typeCounts[r.recordType, default: 0] + delta
        typeCounts[r.recordType] = n > 0 ? n : nil
    }

    /// Tells each sorted list of the record's type about a change. A list that falls far
    /// behind is dropped (building it again costs less than the changes it waits for). Lock held.
    private func noteSorted(old: Record?, new: Record?) {
        let keys = sorted.keys.filter { $0.recordType == old?.recordType || $0.recordType == new?.recordType }
        for key in keys {
            sorted[key]!.note(old: old, new: new)
            if let s = sorted[key], s.pendingCount > max(Self.sortedMaxPending, s.entries.count) { sorted[key] = nil }
        }
    }

    static let sortedLimit = 8
    static let sortedMaxPending = 4_096

    /// Calls `body` with the records of `type` in the order of `sort` (then record name), as of
    /// the last refresh, loaded into memory if they are not. The catalog is locked meanwhile:
    /// `body` must not call the catalog.
    func withSortedRecords<T>(ofType type: String, by sort: [QuerySortDescriptor], _ body: (SortedRecords) -> T) throws(CKError) -> T {
        try loadIfNeeded()
        return lock.withLock {
            // A distance sort is from a point that changes from query to query: sorted for this
            // query alone, it does not push the lists kept for other queries out.
            if sort.contains(where: { $0.relativeLocation != nil }) {
                return body(SortedRecords(recordType: type, sort: sort, records: records.values))
            }
            let key = SortedKey(recordType: type, sort: sort)
            if sorted[key] == nil {
                if sorted.count >= Self.sortedLimit, let oldest = sorted.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                    sorted[oldest] = nil
                }
                sorted[key] = SortedRecords(recordType: type, sort: sort, records: records.values)
            }
            useClock += 1
            sorted[key]!.lastUse = useClock
            sorted[key]!.settle { records[$0] }
            return body(sorted[key]!)
        }
    }

    /// The record named `name`: as of the last refresh when in memory, else as the storage
    /// has it now.
    func record(named name: String) throws(CKError) -> Record? {
        let (inMemory, hit) = lock.withLock { (loaded, records[name]) }
        if inMemory { return hit }
        return try storage.record(named: name)
    }

    /// Names of the records of one type, sorted.
    func names(ofType type: String) throws(CKError) -> [String] {
        if let names = try fromIndex({ (reader) throws(CKError) in try reader.names(ofType: type) }) { return names }
        return try withSortedRecords(ofType: type, by: []) { $0.entries.map(\.name) }
    }

    /// Whether any record has this type.
    func hasRecords(ofType type: String) throws(CKError) -> Bool {
        if let has = try fromIndex({ (reader) throws(CKError) in try reader.hasRecords(ofType: type) }) { return has }
        return lock.withLock { typeCounts[type] != nil }
    }

    /// The record types that have at least one record, sorted.
    func recordTypes() throws(CKError) -> [String] {
        if let types = try fromIndex({ (reader) throws(CKError) in try reader.recordTypes() }) { return types }
        return lock.withLock { Array(typeCounts.keys) }.sorted()
    }

    /// All records, loaded into memory if they are not.
    func allRecords() throws(CKError) -> [Record] {
        try loadIfNeeded()
        return lock.withLock { Array(records.values) }
    }

    /// Whether the catalog holds the zone's records in memory.
    var holdsRecords: Bool { lock.withLock { loaded } }

    /// The sequence number of the newest entry taken in.
    var sequence: Int64 { lock.withLock { lastSeq } }
}

/// Names one ``SortedRecords`` list of a catalog.
struct SortedKey: Hashable {
    var recordType: String
    var sort: [QuerySortDescriptor]
}
