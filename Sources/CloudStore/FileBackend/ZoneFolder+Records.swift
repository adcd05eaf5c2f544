import Foundation
import Synchronization

// Reading records and their names: from the versions the record files lack, the cache, the
// names known, then the files.
extension ZoneFolder {
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
            if let apply { state.withLock { state in state.noteApplied(apply.applied) } }
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
        // A hit, the common case, hashes the name once: the versions the files lack are
        // looked at only when there are some, the names known only after a miss.
        let (pending, hit, seen, absent) = state.withLock { (state: inout ZoneState) -> (ZoneState.Pending?, Record?, UInt64, Bool) in
            if !state.unapplied.isEmpty, let pending = state.unapplied[name] { return (pending, nil, state.generation, false) }
            if let hit = state.cache.lookup(name) { return (nil, hit, state.generation, false) }
            return (nil, nil, state.generation, state.knownNames.map { !$0.mayContain(name) } ?? false)
        }
        if let pending { return pending.record }
        if let hit { return hit }
        if absent { return nil }
        let cacheFileRead = try beforeFileRead()
        guard let record = try readRecordFile(name) else {
            if underWriteLock { try noteMissedProbe() }
            return nil
        }
        if cacheFileRead {
            state.withLock { state in if state.generation == seen { state.cache.insert(record) } }
            if !underWriteLock { cacheBudget.relieve(except: self) }
        }
        return record
    }

    /// Counts a probe that found no file; once the probes have cost about what a listing of
    /// the records folder will, lists it into ``ZoneState/knownNames``. Paying for probes until
    /// they add up to a listing is never much worse than the better of the two. A failed
    /// lookup costs about what listing eight names does, so a listing is worth one probe per 8
    /// names, 280 bytes of folder; the threshold grows with the folder, so a few hundred saves
    /// into a large zone do not pay for a listing they cannot use up. Only under the writer's
    /// lock: no entry can be committed
    /// meanwhile, and the versions the files lack are taken before the listing (as
    /// ``recordNames()`` does), so a file the applier writes meanwhile is in one or the other.
    private func noteMissedProbe() throws(CKError) {
        let due = state.withLock { (state: inout ZoneState) -> Bool in
            state.missedProbes += 1
            return state.knownNames == nil && state.missedProbes >= state.probesBeforeListing
        }
        guard due else { return }
        let folderBytes = (try Syscall.stat(recordsPath).orThrow(.internalError, "cannot stat \(recordsPath)"))?.size ?? 0
        let worth = max(ZoneState.minimumProbesBeforeListing, Int(folderBytes / 280))
        let (ready, seen, pending) = state.withLock { (state: inout ZoneState) -> (Bool, UInt64, [String: ZoneState.Pending]) in
            state.probesBeforeListing = worth
            return (state.missedProbes >= worth, state.generation, state.unapplied)
        }
        guard ready else { return }
        // A pending deletion's name stays known: it only costs its save a look at the file.
        var names = KnownNames(try fileRecordNames())
        for (name, p) in pending where p.record != nil { names.insert(name) }
        state.withLock { state in if state.generation == seen { state.knownNames = names } }
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
        let pending = state.withLock { state in state.unapplied }
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
        if let kept = firstFetchNamesMemo.withLock({ $0 }), kept.epoch == epoch, kept.seq == seq { return kept.names }
        let names = try recordNames()
        firstFetchNamesMemo.withLock { $0 = (epoch, seq, names) }
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
        if state.withLock({ state in state.deleteSelfEdges == nil }) {
            let pending = state.withLock { state in state.unapplied }
            var built = DeleteSelfEdges()
            for name in try fileRecordNames() {
                if let r = try readRecordFile(name) { built.insert(r) }
            }
            for (name, p) in pending {
                if let r = p.record { built.insert(r) } else { built.remove(name) }
            }
            state.withLock { state in if state.deleteSelfEdges == nil { state.deleteSelfEdges = built } }
        }
        return state.withLock { state in body(&state.deleteSelfEdges!) }
    }
}
