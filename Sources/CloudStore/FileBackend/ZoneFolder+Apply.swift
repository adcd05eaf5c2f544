import Foundation
import Synchronization

// Writing record files behind the commit: the commit point is the log's
// fdatasync; the files follow on `applyQueue`, many entries at a time, holding `applyLock`
// and the byte-range lock on the apply marker, never the writer's locks.
extension ZoneFolder {
    /// Runs `body` holding this process's apply lock and the byte-range lock on the apply
    /// marker (other processes' appliers), after checking the zone was not deleted meanwhile.
    func withApplyLock<T>(expecting expected: UInt64? = nil, _ body: (Int32) throws(CKError) -> T) throws(CKError) -> T {
        applyLock.lock()
        defer { applyLock.unlock() }
        let (fd, inode) = try lockFile.descriptorAndInode()
        if let expected, expected != inode { throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) was deleted") }
        try Syscall.rangeLock(fd, start: ApplyMarker.offset, length: ApplyMarker.size, exclusive: true, path: lockPath)
            .orThrow(.internalError, "cannot lock the apply marker of zone \(zoneID.zoneName)")
        defer { _ = Syscall.rangeLock(fd, start: ApplyMarker.offset, length: ApplyMarker.size, exclusive: false, path: lockPath) }
        guard case .success(let st?) = Syscall.stat(lockPath), st.inode == inode else {
            throw CKError(.zoneNotFound, "zone \(zoneID.zoneName) was deleted")
        }
        return try body(fd)
    }

    /// With the apply lock held: writes the files of every entry up to `seq` that the apply
    /// marker does not cover, taking them from `known` (this process's queue) when it holds
    /// them all and from the log otherwise, and moves the marker on.
    func applyEntries(_ fd: Int32, known: [(LogEntry, end: Int64)], upTo seq: Int64) throws(CKError) {
        let (commit, stored) = lockFile.readMarkers(fd)
        let apply = stored ?? ApplyMarker.assumed(from: commit)
        guard apply.applied < seq else {
            state.withLock { state in state.noteApplied(apply.applied) }
            return
        }
        var todo = known.filter { $0.0.seq > apply.applied && $0.0.seq <= seq }
        if todo.first?.0.seq != apply.applied + 1 || todo.last?.0.seq != seq {
            let size = (try Syscall.stat(logPath).orThrow(.internalError, "cannot stat \(logPath)"))?.size ?? 0
            todo = try entries(after: apply.applied, from: apply.end, to: size).filter { $0.0.seq <= seq }
            guard todo.first?.0.seq == apply.applied + 1, todo.last?.0.seq == seq else {
                throw CKError(.internalError, "the log of zone \(zoneID.zoneName) lacks entries \(apply.applied + 1)...\(seq) that its lock file says were committed; run `ckfs fsck`")
            }
        }
        guard let last = todo.last else { return }
        try writeFiles(coalescing: todo.map(\.0))
        try lockFile.writeApplyMarker(fd, ApplyMarker(bootID: CommitMarker.currentBootID, applied: last.0.seq, end: last.end))
        state.withLock { state in state.noteApplied(last.0.seq) }
        keepIndex(todo.map(\.0))
    }

    /// Writes each record's newest version once (a record saved ten times in the batch is
    /// written once) and removes the deleted ones; idempotent, so replays use it too.
    ///
    /// A large batch is written by two threads, each taking every other file: the inode of
    /// an unnamed file is found outside the folder's lock (only the link takes it), and so
    /// is the encoding, so the second core shortens the wait for a batch's files.
    ///
    /// `keepingSame` leaves a file that already holds the bytes it would get (recovery: after
    /// a restart every entry since the checkpoint is replayed, and most of their files were
    /// written before it; reading one costs a tenth of replacing it, and recovery syncs the
    /// file system after).
    func writeFiles(coalescing entries: [LogEntry], keepingSame: Bool = false) throws(CKError) {
        var newest: [String: Record?] = [:]
        for entry in entries {
            for d in entry.deleted { newest[d.recordName] = .some(nil) }
            for r in entry.saved { newest[r.recordID.recordName] = .some(r) }
        }
        // Removals first: on a full disk they make the room the writes need, so a delete
        // still goes through and frees space.
        for (name, record) in newest where record == nil { try writeFile(name, nil) }
        let work = newest.filter { $0.value != nil }.map { (key: $0.key, value: $0.value) }
        guard work.count >= tuning.parallelFilesFrom else {
            for (name, record) in work { try writeFile(name, record, keepingSame: keepingSame) }
            return
        }
        let firstError = Mutex<CKError?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            for i in stride(from: part, to: work.count, by: 2) {
                if firstError.withLock({ $0 != nil }) { return }
                do throws(CKError) {
                    try writeFile(work[i].key, work[i].value, keepingSame: keepingSame)
                } catch {
                    firstError.withLock { if $0 == nil { $0 = error } }
                    return
                }
            }
        }
        if let error = firstError.withLock({ $0 }) { throw error }
    }

    private func writeFile(_ name: String, _ record: Record?, keepingSame: Bool = false) throws(CKError) {
        let path = StoreLayout.recordFile(directory, name: name)
        if let record {
            let bytes = RecordCoding.fileBytes(record)
            if keepingSame, case .success(let held?) = Syscall.readFile(path), held == bytes { return }
            if record.created == record.modified {
                // The save that created it: most likely no file yet (`create` copes if there is one).
                try writer.create(path, with: bytes)
            } else {
                try writer.replace(path, with: bytes, durable: false)
            }
        } else {
            try Syscall.unlink(path).orThrow(.internalError, "cannot delete record file \(name)")
        }
    }

    /// With the writer's lock held, before a commit: entries of other processes (or of this
    /// one's failed applier) that the files lack are applied now, so files are always written
    /// in log order and no entry waits on a process that may be gone.
    /// `apply` is the apply marker as read with `commit`.
    func applyOthersEntries(upTo commit: CommitMarker, apply: ApplyMarker) throws(CKError) {
        guard apply.applied < commit.seq else { return }
        if applier.holdsEverything(upTo: commit.seq) { return }
        do {
            try withApplyLock { (fd) throws(CKError) in try applyEntries(fd, known: [], upTo: commit.seq) }
        } catch where error.diskFull != nil {
            // The log holds those entries and readers see them: the commit may go on, and its
            // own apply starts from the same marker, so files still follow the log's order.
            // A delete then removes its files first and makes room for the rest.
            applier.noteFailure(true)
            return
        }
        applier.noteFailure(false)
    }

    /// Starts the applier for what the queue holds, or (without write-behind) applies now.
    func scheduleApplier() {
        guard applier.schedule() else { return }
        if tuning.writeBehind {
            WriteBehind.register(self)
            applyQueue.async { self.runApplier() }
        } else {
            runApplier()
        }
    }

    /// Applies queued entries until the queue is empty. A failure leaves the entries to the
    /// next writer, which applies them from the log (their saves are durable already).
    ///
    /// With an empty queue the applier waits a moment (`applierLinger`) before it stops: in
    /// a stream of saves the next entry comes meanwhile, so the writer need not wake a
    /// thread for every save (a tenth of its CPU), and files are written in batches.
    private func runApplier() {
        var lingered = false
        while true {
            // The batch with the lock of the zone it was committed to, taken together.
            let (batch, batchLock) = applier.take(stopping: lingered || !tuning.writeBehind)
            guard let last = batch.last else {
                if lingered || !tuning.writeBehind { return }
                lingered = true
                Thread.sleep(forTimeInterval: Self.applierLinger)
                continue
            }
            lingered = false
            do throws(CKError) {
                try withApplyLock(expecting: batchLock) { (fd) throws(CKError) in try applyEntries(fd, known: batch, upTo: last.0.seq) }
            } catch where error.code == .zoneNotFound {
                // Deleted meanwhile: nothing to write.
            } catch {
                applier.noteFailure(true)
            }
        }
    }

    /// Seconds an idle applier waits for the next entry before it stops.
    static let applierLinger: TimeInterval = 0.001

    /// Returns once the record files hold every entry this process committed.
    func waitForFiles() {
        applyQueue.sync {}
    }
}

/// Every zone with files still to write, so a process that exits normally writes them first
/// (an interrupted one leaves them to the next writer or reader, from the log).
enum WriteBehind {
    /// Guards `zones`.
    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var zones: [ObjectIdentifier: Weak] = [:]
    }

    private struct Weak { weak var zone: ZoneFolder? }

    private static let registry: Registry = {
        atexit { WriteBehind.drainAll() }
        return Registry()
    }()

    static func register(_ zone: ZoneFolder) {
        let r = registry
        r.lock.withLock {
            if r.zones[ObjectIdentifier(zone)]?.zone == nil { r.zones[ObjectIdentifier(zone)] = Weak(zone: zone) }
        }
    }

    /// Waits until every zone of this process has written its files.
    static func drainAll() {
        let r = registry
        let zones = r.lock.withLock { () -> [ZoneFolder] in
            r.zones = r.zones.filter { $0.value.zone != nil }
            return r.zones.values.compactMap(\.zone)
        }
        for z in zones { z.waitForFiles() }
    }
}
