import Foundation
import Logging
import Synchronization

// Keeping the zone's index file (``ZoneIndexFile``) in step with the log. The applier takes
// in the entries it has just written the files of, never waiting for the index; a reader that
// wants the index first brings it up to the log's end itself, or rebuilds it from the record
// files and the log when the log cannot bring it up to date. Neither ever changes what a save
// does: the index is derived data, and a failure to keep it only leaves it behind the log.
extension ZoneFolder {
    var indexPath: String { StoreLayout.indexFile(directory) }

    static let indexLogger = Logger(label: "ckfs.index")

    /// The index as this process has it open, opened (with `create`, made) when it is not;
    /// nil when there is no index file and `create` is false. A file replaced since it was
    /// opened (a zone made again, a restored backup) is opened anew.
    func openIndex(create: Bool) throws(CKError) -> ZoneIndexFile? {
        let st = try Syscall.stat(indexPath).orThrow(.internalError, "cannot stat \(indexPath)")
        if let st, let open = indexSlot.file(openedAt: st.inode) { return open }
        guard st != nil || create else { return nil }
        if st == nil {
            // A new index takes room that a delete on a nearly full disk needs (its log entry,
            // the space reserve): it is made only with room to spare.
            let free = try Syscall.freeBytes(directory).orThrow(.internalError, "cannot see the free space of \(directory)")
            guard free >= Self.indexMinimumFreeBytes else {
                throw CKError(.internalError, "the index of zone \(zoneID.zoneName) is not made: the disk has \(free >> 20) MiB free, under \(Self.indexMinimumFreeBytes >> 20) MiB")
            }
        }
        let opened: ZoneIndexFile?
        do {
            opened = try ZoneIndexFile.open(indexPath, create: create)
        } catch where Self.isDamage(error) {
            // Not a database, or damaged: it is only derived data, so it is made anew.
            removeDamagedIndexFiles(error)
            opened = try ZoneIndexFile.open(indexPath, create: create)
        }
        guard let opened else { return nil }
        let inode = (try Syscall.stat(indexPath).orThrow(.internalError, "cannot stat \(indexPath)"))?.inode ?? 0
        indexSlot.hold(opened, openedAt: inode)
        return opened
    }

    /// The free space below which no index is made (one that exists is still kept).
    static let indexMinimumFreeBytes: Int64 = 64 << 20

    /// Whether SQLite found the file damaged: not a database, damaged pages, or shorter than
    /// its header says (a truncated copy).
    static func isDamage(_ error: CKError) -> Bool {
        guard case .database(let code)? = error.cause else { return false }
        return SQLiteDatabase.isDamage(code)
    }

    /// Removes an index file that SQLite found damaged (`error`), saying so in the log and to
    /// `fsck` (``ZoneIndexSlot/noteDamage(_:)``); the next use makes it again.
    func removeDamagedIndexFiles(_ error: CKError) {
        Self.indexLogger.warning("the index of zone \(zoneID.zoneName) is damaged (\(error)); it is made again from the records and the log")
        indexSlot.noteDamage(error.message)
        removeIndexFiles()
    }

    /// Removes the index file and SQLite's files beside it.
    func removeIndexFiles() {
        for suffix in ["", "-wal", "-shm"] { _ = Syscall.unlink(indexPath + suffix) }
        indexSlot.release()
    }

    /// With the apply lock held, after the files of `entries` were written: the index, when
    /// the zone has one, takes them in. It never waits for another process's index
    /// transaction, and takes nothing in when it is behind the first of them (a reader then
    /// brings it up to date from the log).
    func keepIndex(_ entries: [LogEntry]) {
        guard let last = entries.last else { return }
        do throws(CKError) {
            guard let index = try openIndex(create: false) else { return }
            try index.update(waitingMilliseconds: 0, skipIfInUse: true) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
                guard let state, state.applied < last.seq, state.applied + 1 >= entries[0].seq,
                      try trusts(state, of: index) else { return state }
                for e in entries where e.seq > state.applied { try writer.apply(e) }
                return ZoneIndexFile.State(epoch: state.epoch, after: last)
            }
        } catch where Self.isDamage(error) {
            removeDamagedIndexFiles(error)
        } catch {
            if !SQLiteDatabase.isBusy(error) {
                Self.indexLogger.notice("the index of zone \(zoneID.zoneName) was not updated (\(error)); the next reader brings it up to date")
            }
        }
    }

    /// Whether `state` is of this log: the entry it names is in the log with the same time and
    /// device. Checked once per opening of the index; after that this process keeps it.
    func trusts(_ state: ZoneIndexFile.State, of index: ZoneIndexFile) throws(CKError) -> Bool {
        if indexSlot.trusts(index) { return true }
        guard try isLogged(state) else { return false }
        indexSlot.trust(index)
        return true
    }

    /// The index brought up to the last entry of the log, made when there is none; nil (with
    /// a line in the log saying why) when it cannot be used, and the caller reads the records
    /// another way.
    /// `waitingMilliseconds` is how long to wait for another process that is writing the
    /// index (making it takes tens of seconds at a million records).
    func currentIndex(waitingMilliseconds: Int32 = 10_000) -> ZoneIndexFile? {
        do throws(CKError) {
            return try bringIndexUpToDate(waitingMilliseconds: waitingMilliseconds)
        } catch where Self.isDamage(error) {
            removeDamagedIndexFiles(error)
            do throws(CKError) { return try bringIndexUpToDate(waitingMilliseconds: waitingMilliseconds) } catch {
                Self.indexLogger.warning("the index of zone \(zoneID.zoneName) cannot be used: \(error)")
                return nil
            }
        } catch {
            if error.code != .zoneNotFound {
                Self.indexLogger.warning("the index of zone \(zoneID.zoneName) cannot be used: \(error)")
            }
            // A full disk while the index was being made: it gives its room back (it is made
            // again with room). One that holds a state may be open in other processes: kept.
            if error.diskFull != nil || Self.isFull(error), (try? indexSlot.file?.state()) ?? nil == nil { removeIndexFiles() }
            return nil
        }
    }

    /// `body`'s answer from the index brought up to the log's last entry (``currentIndex(waitingMilliseconds:)``);
    /// nil when there is no index to use, and the caller reads the records another way. Damage
    /// SQLite finds only in the pages `body` reads (a page overwritten in the middle of the
    /// file) removes the index, which is made again, and `body` runs once more on the new one:
    /// a damaged index costs its rebuild, never a wrong answer or an error.
    func withCurrentIndex<T>(waitingMilliseconds: Int32 = 10_000, _ body: (ZoneIndexFile) throws(CKError) -> T) throws(CKError) -> T? {
        guard let index = currentIndex(waitingMilliseconds: waitingMilliseconds) else { return nil }
        do throws(CKError) {
            return try body(index)
        } catch where Self.isDamage(error) {
            removeDamagedIndexFiles(error)
            guard let made = currentIndex(waitingMilliseconds: waitingMilliseconds) else { return nil }
            return try body(made)
        }
    }

    /// Record files a rebuild reads before it puts them.
    static let rebuildChunk = 2_048

    /// The records of the files named, in their order (a file gone meanwhile is left out),
    /// read and parsed by two threads.
    private func readRecordFiles(_ names: ArraySlice<String>) throws(CKError) -> [Record] {
        let names = Array(names)
        let halves = Mutex<[[Record?]]>([[], []])
        let firstError = Mutex<CKError?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            var read: [Record?] = []
            for i in stride(from: part, to: names.count, by: 2) {
                do throws(CKError) {
                    read.append(try readRecordFile(names[i]))
                } catch {
                    firstError.withLock { if $0 == nil { $0 = error } }
                    return
                }
            }
            halves.withLock { $0[part] = read }
        }
        if let error = firstError.withLock({ $0 }) { throw error }
        let (even, odd) = halves.withLock { ($0[0], $0[1]) }
        var out: [Record] = []
        out.reserveCapacity(names.count)
        for i in 0..<names.count {
            if let r = i % 2 == 0 ? even[i / 2] : odd[i / 2] { out.append(r) }
        }
        return out
    }

    /// Keeps `pair` in the zone's index from now on
    /// (``ZoneIndexFile/keepPair(_:now:idleBefore:waitingMilliseconds:)``), in place of the pair
    /// used longest ago when the index keeps its most and that one is idle
    /// (``ZoneTuning/pairIdleMilliseconds``); false, with a line in the log, when the index does
    /// not take it: the query then finds and sorts its matches, and a later query tries again.
    /// Waits at most 50 ms for another process's transaction: a query does not wait on a
    /// rebuild.
    func keepPair(_ pair: ZoneIndexFile.Pair, in index: ZoneIndexFile) -> Bool {
        let what = "a pair index of \(pair.type) records by \(pair.key), sorted by \(pair.sort), in zone \(zoneID.zoneName)"
        let now = Clock.milliseconds()
        do throws(CKError) {
            let (kept, dropped) = try index.keepPair(pair, now: now, idleBefore: now - tuning.pairIdleMilliseconds, waitingMilliseconds: 50)
            if let dropped {
                Self.indexLogger.notice("the pair index of \(dropped.type) records by \(dropped.key), sorted by \(dropped.sort), in zone \(zoneID.zoneName) is dropped: it was used longest ago, and the zone keeps \(ZoneIndexFile.pairLimit)")
            }
            guard kept else {
                Self.indexLogger.notice("\(what) is not made: the zone keeps \(ZoneIndexFile.pairLimit) pair indexes, each used in the last \(tuning.pairIdleMilliseconds / 60_000) minutes")
                return false
            }
            Self.indexLogger.notice("\(what) is kept from now on: its queries walk only their matches")
            return true
        } catch {
            Self.indexLogger.notice("\(what) is not made now (\(error)); the query sorts its matches")
            return false
        }
    }

    /// Notes a query's use of `pair`, last noted at `lastUse`, when that was more than a sixth
    /// of ``ZoneTuning/pairIdleMilliseconds`` ago; a read that cannot write the index (another
    /// process's transaction, a read-only file) leaves it to a later query.
    func notePairUse(_ pair: ZoneIndexFile.Pair, lastUse: Int64, in index: ZoneIndexFile) {
        let now = Clock.milliseconds()
        guard now - lastUse >= tuning.pairIdleMilliseconds / 6 else { return }
        try? index.notePairUse(pair, now: now)
    }

    /// Whether SQLite ran out of room (`SQLITE_FULL`).
    static func isFull(_ error: CKError) -> Bool {
        guard case .database(let code)? = error.cause else { return false }
        return SQLiteDatabase.isFull(code)
    }

    private func bringIndexUpToDate(waitingMilliseconds: Int32) throws(CKError) -> ZoneIndexFile? {
        try recoverAfterRestartIfNeeded()
        guard let index = try openIndex(create: true) else { return nil }
        let meta = try readMeta()
        let marker = try peekMarker()
        // Up to date: nothing to write, so no write lock to wait for.
        if let state = try index.state(), let marker, !marker.busy, state.applied == marker.seq,
           state.epoch == meta.epoch, try trusts(state, of: index) {
            return index
        }
        var rebuilt = false
        defer { if rebuilt { ProcessTuning.releaseFreedMemory() } }
        try index.update(waitingMilliseconds: waitingMilliseconds) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
            if let state, state.epoch == meta.epoch, try trusts(state, of: index) {
                if let page = try history(after: state.applied, changeLimit: nil, meta: meta, withClientChangeToken: false) {
                    guard let last = page.entries.last else { return state }
                    for e in page.entries { try writer.apply(e) }
                    return ZoneIndexFile.State(epoch: meta.epoch, after: last)
                }
            }
            rebuilt = true
            return try rebuildIndex(writer, epoch: meta.epoch)
        }
        return index
    }

    /// Empties the index and fills it from the record files, then the log entries they may
    /// not hold yet (after the apply marker, read before the files), as ``ZoneCatalog`` loads
    /// a zone. Records are read one at a time, never the whole zone at once.
    private func rebuildIndex(_ writer: ZoneIndexFile.Writer, epoch: String) throws(CKError) -> ZoneIndexFile.State {
        if let damage = knownDamage() { throw damage }
        observers.zoneRead?()
        Self.indexLogger.notice("making the index of zone \(zoneID.zoneName) from its records and log")
        indexSlot.distrust()
        try writer.removeAll()
        let applied = currentApplyMarker()
        guard let st = try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)") else {
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) does not exist")
        }
        // Files are read and parsed by two threads a chunk at a time (parsing is most of a
        // rebuild), and put in name order by this one.
        let names = try fileRecordNames()
        for start in stride(from: 0, to: names.count, by: Self.rebuildChunk) {
            let chunk = names[start..<min(start + Self.rebuildChunk, names.count)]
            for record in try readRecordFiles(chunk) {
                try writer.put(record, seq: record.recordChangeTag.flatMap { Int64($0) } ?? 0)
            }
        }
        let (entries, _) = try entriesFollowing(applied?.applied ?? Int64.min, from: applied?.end ?? -1, to: st.size)
        if let applied, let first = entries.first?.0, first.seq > applied.applied + 1 {
            // The log was compacted past the files meanwhile: what lies between is in neither.
            throw CKError(.internalError, "the log of zone \(zoneID.zoneName) changed while its index was made; the next reader makes it again")
        }
        for (e, _) in entries { try writer.apply(e) }
        try writer.finishRebuild()
        // The state says only what was read: the last entry replayed, else the apply marker's
        // (its files were listed), else nothing (a later reader catches up from the start).
        if let last = entries.last?.0 {
            return ZoneIndexFile.State(epoch: epoch, after: last)
        }
        if let seq = applied?.applied, seq > 0, let stamp = try loggedStamp(seq: seq) {
            return ZoneIndexFile.State(epoch: epoch, applied: seq, time: stamp.time, device: stamp.deviceID, checksum: stamp.checksum)
        }
        return ZoneIndexFile.State(epoch: epoch, applied: 0, time: 0, device: "", checksum: nil)
    }
}

extension ZoneFolder {
    /// `fsck`'s look at the index, after the files were checked: brought up to the log's end
    /// (made when missing or damaged), then compared with every record file; made again when
    /// it differs. Runs without the zone's locks (the index takes its own).
    func checkIndex(_ result: inout CheckResult) {
        let name = zoneID.zoneName
        // The index is derived: one that cannot be made or checked (a full disk, a read-only
        // folder) loses nothing, and queries read the zone itself meanwhile. Damage SQLite
        // finds at the opening, or only in the pages the comparison reads (a truncated copy
        // whose first pages say it is up to date), removes it, and it is made and compared again.
        _ = indexSlot.takeDamage()
        let compared = Result { () throws(CKError) in try withCurrentIndex { (index) throws(CKError) in try compare(index) } }
        if let damage = indexSlot.takeDamage() {
            let made = if case .success(nil) = compared { "" } else { " and made it again from the records and the log" }
            result.repaired.append("zone \(name): its index (index.sqlite) was damaged (\(damage)); removed it\(made)")
        }
        switch compared {
        case .success(nil):
            result.warnings.append("zone \(name): its index (\(indexPath)) cannot be made now; the CLI reads the whole zone for queries until it can (see the line before)")
        case .failure(let error):
            result.warnings.append("zone \(name): cannot check its index (\(indexPath)): \(error.message); with no ckfs process using the store, remove the file and run `ckfs fsck` again")
        case .success(let (differing, pairRows)?):
            if differing > 0 {
                result.repaired.append("zone \(name): its index (index.sqlite) differed from the records in \(differing) records; made it again from the records and the log")
            } else if pairRows > 0 {
                result.repaired.append("zone \(name): its pair indexes (index.sqlite) differed from the records in \(pairRows) rows; emptied them, and the next query that needs one makes it again")
            }
        }
    }

    /// Compares `index` with every record file, making it again when they differ (and emptying
    /// its pair rows when only those differ): the records that differed, and the pair rows.
    private func compare(_ index: ZoneIndexFile) throws(CKError) -> (differing: Int, pairRows: Int) {
        var differing = 0
        var pairRows = 0
        try index.update(waitingMilliseconds: 10_000) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
            // A chunk of names at a time, the files' and the index's in the same ranges (in
            // SQLite's order of text), so that memory holds a chunk's entries, not the zone's.
            let names = try fileRecordNames().sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            var start = 0
            repeat {
                let end = min(start + Self.rebuildChunk, names.count)
                var held = try writer.reader.entries(from: start == 0 ? "" : names[start], below: end < names.count ? names[end] : nil)
                for file in names[start..<end] {
                    guard let record = try readRecordFile(file) else { continue }
                    let expected = ZoneIndexFile.Entry(record, seq: record.recordChangeTag.flatMap { Int64($0) } ?? 0)
                    if held.removeValue(forKey: file) != expected { differing += 1 }
                }
                differing += held.count
                start = end
            } while start < names.count
            guard differing > 0 else {
                pairRows = try writer.pairRowsDiffering()
                if pairRows > 0 { try writer.forgetPairRows() }
                return state
            }
            return try rebuildIndex(writer, epoch: try readMeta().epoch)
        }
        return (differing, pairRows)
    }
}
