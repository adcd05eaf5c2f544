import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudStore

/// Durability and recovery without killing processes (the crash test in ckfsTests does that): injected
/// I/O errors and crash states built by hand.
@Suite struct DurabilityTests {
    /// The lock file's markers, written and read by hand: the same bytes the JSON writer
    /// gives, back to the same values, and text the fast reader does not expect (spaces, a
    /// key order of its own, escapes, a number too long for it) read by the JSON parser.
    @Test func markersReadBackAndHandEditedOnesStillRead() {
        let commit = CommitMarker(bootID: "c86b4cf2-2d2a", seq: 41_000, usage: -3, busy: true)
        let apply = ApplyMarker(bootID: "c86b4cf2-2d2a", applied: 40_999, end: 1_234_567)
        func reference(_ o: [String: JSONValue]) -> [UInt8] {
            var b = JSONWriter.compact(.object(o))
            b += Array(repeating: 0x20, count: 127 - b.count) + [0x0A]
            return b
        }
        #expect(commit.bytes() == reference(["boot": .string("c86b4cf2-2d2a"), "seq": .int(41_000), "usage": .int(-3), "state": .string("busy")]))
        #expect(apply.bytes() == reference(["boot": .string("c86b4cf2-2d2a"), "applied": .int(40_999), "end": .int(1_234_567)]))
        #expect(CommitMarker(bytes: commit.bytes()) == commit)
        #expect(ApplyMarker(bytes: apply.bytes()) == apply)
        let edited = Array(#"{ "usage": 7, "state": "clean", "seq": 1234567890123456789, "boot": "a\u0062c" }"#.utf8) + [0x0A]
        #expect(CommitMarker(bytes: edited) == CommitMarker(bootID: "abc", seq: 1_234_567_890_123_456_789, usage: 7, busy: false))
        #expect(CommitMarker(bytes: Array("{\"boot\":\"x\",\"seq\":1}".utf8)) == nil, "a marker lacking fields is none")
        #expect(ApplyMarker(bytes: Array(repeating: 0x20, count: 128)) == nil)
    }

    /// Fails `sync`, `write` or `rename` (a link included) of paths with a given suffix, `times`
    /// times, with `errno`.
    struct FaultyIO: StorageIO {
        let plan: LockedBox<(suffix: String, op: String, errno: Int32, times: Int)>
        let real = PosixIO()

        func shouldFail(_ op: String, _ path: String) -> Int32? {
            var hit: Int32?
            plan.mutate { p in
                if p.times > 0, p.op == op, path.hasSuffix(p.suffix) { p.times -= 1; hit = p.errno }
            }
            return hit
        }
        func write(_ fd: Int32, _ bytes: [UInt8], path: String) -> Result<Void, SystemCallError> {
            if let e = shouldFail("write", path) { return .failure(SystemCallError(call: "write", path: path, errno: e)) }
            return real.write(fd, bytes, path: path)
        }
        func sync(_ fd: Int32, path: String, dataOnly: Bool) -> Result<Void, SystemCallError> {
            if let e = shouldFail("sync", path) { return .failure(SystemCallError(call: "fsync", path: path, errno: e)) }
            return real.sync(fd, path: path, dataOnly: dataOnly)
        }
        func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError> {
            if let e = shouldFail("rename", to) { return .failure(SystemCallError(call: "rename", path: to, errno: e)) }
            return real.rename(from, to)
        }
        /// A new record file is put in place by a link, not a rename: a "rename" fault fails both.
        func link(_ fd: Int32, to path: String) -> Result<Void, SystemCallError> {
            if let e = shouldFail("rename", path) { return .failure(SystemCallError(call: "linkat", path: path, errno: e)) }
            return real.link(fd, to: path)
        }
    }

    func zoneDir(_ db: Database, _ zone: String = ZoneID.defaultZoneName) -> String { db.zoneDirectory(zone) }

    /// The commit point is the log's sync, or the journal's when the entry goes there.
    @Test(arguments: [("/log.jsonl", Int64(0)), ("/journal", ZoneTuning().journalBytes)])
    func aFailedLogSyncIsNeverAcknowledgedAndFencesTheZone(_ synced: String, journalBytes: Int64) throws {
        let plan = LockedBox((suffix: "", op: "", errno: Int32(0), times: 0))
        let t = try TempStore(io: FaultyIO(plan: plan), tuning: .with { $0.journalBytes = journalBytes })
        let db = try t.db()
        try db.save(record("before"))
        plan.mutate { $0 = (synced, "sync", EIO, 1) }
        let failed = try db.modify(saving: [record("lost")])
        let e = try #require(failed.saveResults[0].1.error)
        #expect(e.code == .internalError)
        #expect(e.message.contains("failed to store the log"))
        if case .system(let cause)? = e.cause { #expect(cause.errno == EIO) } else { Issue.record("no cause") }
        // Fenced: no retry-then-acknowledge.
        let again = try db.modify(saving: [record("next")])
        #expect(again.saveResults[0].1.error?.message.contains("closed") == true)
        // A new opening recovers; the failed save is not there, earlier ones are.
        let fresh = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        #expect(fresh.fetch([id("lost")])[0].1.error?.code == .unknownItem)
        #expect((try? fresh.record(for: id("before"))) != nil)
        try fresh.save(record("next"))
        #expect(t.store.check().isClean)
    }

    @Test func aFullDiskSaysSoAndSavesNothing() throws {
        let plan = LockedBox((suffix: "log.jsonl", op: "write", errno: ENOSPC, times: 1))
        let t = try TempStore(io: FaultyIO(plan: plan))
        let db = try t.db()
        let r = try db.modify(saving: [record("x")])
        #expect(r.saveResults[0].1.error?.message.contains("nothing was saved") == true)
        #expect(db.fetch([id("x")])[0].1.error?.code == .unknownItem)
        try db.save(record("x"))
    }

    /// A new record file is an unnamed file linked to its name. It lands whole where no
    /// file was, replaces one that was there (a replay), and a failed link leaves nothing:
    /// no file, no temp file.
    @Test func newFilesAreLinkedWholeAndAFailedLinkLeavesNothing() throws {
        let plan = LockedBox((suffix: "", op: "", errno: Int32(0), times: 0))
        let writer = FileWriter(io: FaultyIO(plan: plan))
        let dir = NSTemporaryDirectory() + "ckfs-link-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func contents() throws -> [String: String] {
            var all: [String: String] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
                all[name] = try String(contentsOfFile: dir + "/" + name, encoding: .utf8)
            }
            return all
        }
        try writer.create(dir + "/a.json", with: Array("first".utf8))
        #expect(try contents() == ["a.json": "first"])
        try writer.create(dir + "/a.json", with: Array("second, longer".utf8))
        #expect(try contents() == ["a.json": "second, longer"], "a name that is taken is replaced, with no temp file left")
        plan.mutate { $0 = ("/b.json", "rename", ENOSPC, 1) }
        #expect(throws: CKError.self) { try writer.create(dir + "/b.json", with: Array("lost".utf8)) }
        #expect(try contents() == ["a.json": "second, longer"])
    }

    /// After the commit point the save is durable: a record file that cannot be replaced
    /// then does not turn it into a failure; the next writer replays the entry.
    @Test func aFailureAfterTheCommitPointStillAcknowledgesAndIsReplayed() throws {
        let plan = LockedBox((suffix: "", op: "", errno: Int32(0), times: 0))
        let t = try TempStore(io: FaultyIO(plan: plan))
        let db = try t.db()
        plan.mutate { $0 = ("/records/a.json", "rename", ENOSPC, 1) }
        let saved = try db.save(record("a", ["v": .int64(1)]))
        t.store.waitForRecordFiles()
        #expect(saved.recordChangeTag == "1")
        #expect(try db.record(for: id("a"))["v"] == .int64(1), "this process sees its own save")
        #expect(!FileManager.default.fileExists(atPath: StoreLayout.recordFile(zoneDir(db), name: "a")))
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        try other.save(record("b"))
        #expect(FileManager.default.fileExists(atPath: StoreLayout.recordFile(zoneDir(db), name: "a")), "replayed by the next writer")
        #expect(t.store.check().isClean)
    }

    @Test func aTornLogTailIsCutAndTheZoneGoesOn() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a", ["v": .int64(1)]))
        let log = StoreLayout.logFile(zoneDir(db))
        let size = try FileManager.default.attributesOfItem(atPath: log)[.size] as! Int
        let handle = try #require(FileHandle(forWritingAtPath: log))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"body":{"seq":2,"saved":[{"recordName":"#.utf8))
        try handle.close()
        try markBusy(db)
        let report = t.store.check()
        #expect(report.isClean)
        #expect(report.repaired.contains { $0.contains("torn log tail") })
        #expect(try FileManager.default.attributesOfItem(atPath: log)[.size] as! Int == size)
        try db.save(record("b"))
        #expect(try db.record(for: id("a"))["v"] == .int64(1))
    }

    /// The writer died after the commit point, before replacing the record file.
    @Test func aCommittedEntryThatWasNotAppliedIsReplayed() throws {
        let t = try TempStore()
        let db = try t.db()
        try commitWithoutApplying(db)
        // The next writer (here another process's) replays before it writes.
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        try other.save(record("b"))
        let file = try ZoneFolder.decodeRecordFile(Array(FileManager.default.contents(atPath: StoreLayout.recordFile(zoneDir(db), name: "a"))!), path: "a")
        #expect(file["v"] == .int64(2))
        #expect(file.recordChangeTag == "2")
        #expect(try other.record(for: id("b")).recordChangeTag == "3")
    }

    /// A reader that meets a commit between its commit point and its file replace reads the
    /// committed version from the log, not the file behind it; and a save based on the file's
    /// older version is a conflict, never a lost update (found by the two-process counter test).
    @Test func aRecordCommittedButNotInItsFileIsReadFromTheLog() throws {
        let t = try TempStore()
        let db = try t.db()
        try commitWithoutApplying(db)
        let path = StoreLayout.recordFile(zoneDir(db), name: "a")
        var stale = try ZoneFolder.decodeRecordFile(Array(FileManager.default.contents(atPath: path)!), path: path)
        #expect(stale["v"] == .int64(1), "the file is not replaced yet")
        let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        #expect(try reader.record(for: id("a"))["v"] == .int64(2))
        #expect(try reader.allRecords().map(\.recordChangeTag) == ["2"])
        stale["v"] = .int64(10)
        #expect { try reader.save(stale) } throws: { ($0 as? CKError)?.code == .serverRecordChanged }
        #expect(try reader.record(for: id("a"))["v"] == .int64(2))
    }

    /// After a reboot the marker's page-cache writes may be gone: replay from the checkpoint.
    @Test func anotherBootReplaysFromTheCheckpoint() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a", ["v": .int64(1)]))
        try db.save(record("b"))
        t.store.waitForRecordFiles()
        let path = StoreLayout.recordFile(zoneDir(db), name: "a")
        try FileManager.default.removeItem(atPath: path) // as if its data never reached the disk
        let lock = StoreLayout.lockFile(zoneDir(db))
        var marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        marker.bootID = "an-earlier-boot"
        try rewriteCommitMarker(lock, marker)
        let report = t.store.check()
        #expect(report.isClean)
        #expect(report.repaired.contains { $0.contains("replayed 2") })
        #expect(FileManager.default.fileExists(atPath: path))
    }

    /// Recovery after a reboot, and after a writer killed during an append, reads the log
    /// from the last entry the files hold on (found by bisecting it), not the whole log: a
    /// zone's first reader after a restart does not parse every record of a log of up to 32
    /// MiB. It still replays what it must, cuts the torn tail, and fsck still reads it all.
    @Test func recoveryReadsTheLogFromWhatItReplays() throws {
        let t = try TempStore(tuning: .with { $0.checkpointEvery = 64 })
        let db = try t.db()
        let body = String(repeating: "x", count: 1_000)
        for i in 0..<300 { try db.save(record("r\(i)", ["body": .string(body), "i": .int64(Int64(i))])) }
        t.store.waitForRecordFiles()
        let dir = zoneDir(db)
        let logSize = try #require(try FileManager.default.attributesOfItem(atPath: StoreLayout.logFile(dir))[.size] as? Int)
        let checkpoint = try db.zoneFolder(ZoneID.defaultZoneName).readMeta().checkpointSeq
        #expect(checkpoint == 256)
        // Another boot: the files of the entries after the checkpoint may be gone or old.
        try FileManager.default.removeItem(atPath: StoreLayout.recordFile(dir, name: "r290"))
        try Data(#"{"stale":true}"#.utf8).write(to: URL(fileURLWithPath: StoreLayout.recordFile(dir, name: "r291")))
        func inode(_ name: String) throws -> UInt64? {
            try FileManager.default.attributesOfItem(atPath: StoreLayout.recordFile(dir, name: name))[.systemFileNumber] as? UInt64
        }
        let intact = try inode("r280")
        let lock = StoreLayout.lockFile(dir)
        var marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        marker.bootID = "an-earlier-boot"
        try rewriteCommitMarker(lock, marker)

        func firstRead(_ name: String) throws -> (value: Int64?, read: Int) {
            let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
            let storage = reader.zoneFolder(ZoneID.defaultZoneName)
            let read = Mutex(0)
            storage.observers.logRead = { n in read.withLock { $0 += n } }
            let value = try reader.record(for: id(name))["i"]
            storage.observers.logRead = nil
            guard case .int64(let v)? = value else { return (nil, read.withLock { $0 }) }
            return (v, read.withLock { $0 })
        }
        let afterBoot = try firstRead("r290")
        #expect(afterBoot.value == 290)
        #expect(FileManager.default.fileExists(atPath: StoreLayout.recordFile(dir, name: "r290")), "the entry was replayed into its file")
        #expect(try String(contentsOfFile: StoreLayout.recordFile(dir, name: "r291"), encoding: .utf8).contains("\"r291\""), "an old file is replaced")
        #expect(try inode("r280") == intact, "a file that holds its entry's version is left as it is")
        // The 44 entries after the checkpoint and the one before them, of 300.
        #expect(afterBoot.read < logSize / 4, "recovery after a reboot read \(afterBoot.read) of the log's \(logSize) bytes")

        // A writer killed during an append: the marker busy and half an entry at the end.
        let log = try #require(FileHandle(forWritingAtPath: StoreLayout.logFile(dir)))
        try log.seekToEnd()
        try log.write(contentsOf: Data(#"{"body":{"deleted":[],"saved":[{"fields":{"i":"#.utf8))
        try log.close()
        marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        marker.busy = true
        try rewriteCommitMarker(lock, marker)
        // A reader leaves it to the next writer, reading nothing past the apply marker.
        let afterKill = try firstRead("r299")
        #expect(afterKill.value == 299)
        #expect(afterKill.read < logSize / 10, "a reader after a killed append read \(afterKill.read) of the log's \(logSize) bytes")
        // The next writer recovers: it cuts the torn tail, reading the last entry and the tail.
        let writerStore = try t.reopen()
        let writer = try writerStore.container().database(.private, caller: Caller(userName: "alice", deviceID: "writer"))
        let read = Mutex(0)
        writer.zoneFolder(ZoneID.defaultZoneName).observers.logRead = { n in read.withLock { $0 += n } }
        try writer.save(record("after"))
        #expect(read.withLock { $0 } < logSize / 10, "recovery of a killed append read \(read.withLock { $0 }) of the log's \(logSize) bytes")
        let log2 = try String(contentsOfFile: StoreLayout.logFile(dir), encoding: .utf8)
        #expect(log2.split(separator: "\n").count == 301, "the torn tail is cut and the save appended")
        #expect(log2.hasSuffix("\n"))
        writerStore.waitForRecordFiles()
        let report = t.store.check()
        #expect(report.isClean, "\(report.damage)")
        #expect(report.records == 301)
    }

    @Test func fsckRepairsFromTheLogAndReportsWhatItCannotRepair() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a", ["v": .int64(1)]))
        t.store.waitForRecordFiles()
        let dir = zoneDir(db)
        // A record file changed behind the store's back: the log has its version.
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: StoreLayout.recordFile(dir, name: "a")))
        try Data("x".utf8).write(to: URL(fileURLWithPath: StoreLayout.recordsDirectory(dir) + "/.ckfs-tmp-a.json-123"))
        var report = t.store.check()
        #expect(report.isClean)
        #expect(report.repaired.contains { $0.contains("rewrote record a") })
        #expect(try db.record(for: id("a"))["v"] == .int64(1))
        // A file the log knows nothing of, and broken: damage a person must look at.
        try Data("{ nope".utf8).write(to: URL(fileURLWithPath: StoreLayout.recordFile(dir, name: "stray")))
        report = t.store.check()
        #expect(!report.isClean)
        #expect(report.damage.contains { $0.contains("stray") && $0.contains("not valid JSON") })
    }

    @Test func fsckFindsAChangedAssetAndRebuildsUsage() throws {
        let t = try TempStore()
        let db = try t.db()
        let file = t.path + "/in.bin"
        try Data("abc".utf8).write(to: URL(fileURLWithPath: file))
        let saved = try db.save(record("p", ["img": .asset(Asset(file: file))]))
        guard case .asset(let a)? = saved["img"] else { return }
        t.store.waitForRecordFiles() // else fsck's recovery applies the entry and sets the figure itself
        // Usage figure wrong: fsck rebuilds it.
        let lock = StoreLayout.lockFile(zoneDir(db))
        var marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        let right = marker.usage
        marker.usage = 99_999
        try rewriteCommitMarker(lock, marker)
        var report = t.store.check()
        #expect(report.repaired.contains { $0.contains("usage was 99999") })
        #expect(try db.usage() == right)
        try Data("abd".utf8).write(to: URL(fileURLWithPath: try db.assetFile(a)))
        report = t.store.check()
        #expect(report.damage.contains { $0.contains("does not match its checksum") })
    }

    /// The state a writer killed after its commit point leaves: record a saved as v = 1, then
    /// v = 2 committed to the log (seq 2) but its file not replaced and the marker busy.
    func commitWithoutApplying(_ db: Database) throws {
        let v1 = try db.save(record("a", ["v": .int64(1)]))
        db.store.waitForRecordFiles()
        var v2 = v1.replacingFields(["v": .int64(2)])
        v2.recordChangeTag = "2"
        let entry = LogEntry(seq: 2, time: 0, userRecordName: db.userRecordName, deviceID: "d", clientChangeToken: nil,
                             saved: [v2], deleted: [], usage: v2.usageBytes)
        let handle = try #require(FileHandle(forWritingAtPath: StoreLayout.logFile(zoneDir(db))))
        handle.seekToEndOfFile()
        handle.write(Data(entry.frame()))
        try handle.close()
        try markBusy(db)
    }

    /// A copy of the store directory is a backup; `fsck` on it, and it opens as it was.
    @Test func aCopiedStoreIsABackupThatChecksCleanAndOpens() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("Work")
        try db.save(record("a", ["v": .int64(1)]))
        try db.save(record("w", zone: "Work", ["v": .int64(1)]))
        let copy = t.path + "-backup"
        try FileManager.default.copyItem(atPath: t.path, toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        var a = try db.record(for: id("a"))
        a["v"] = .int64(2)
        try db.save(a)
        try db.deleteZone("Work")
        let restored = try Store.open(at: copy)
        #expect(restored.check().isClean)
        let rdb = try restored.container().database(.private, caller: Caller(userName: "alice"))
        #expect(try rdb.record(for: id("a"))["v"] == .int64(1))
        #expect(try rdb.record(for: id("w", zone: "Work"))["v"] == .int64(1))
        try rdb.save(record("after-restore"))
        #expect(try db.record(for: id("a"))["v"] == .int64(2), "the original is untouched")
    }

    func markBusy(_ db: Database) throws {
        let lock = StoreLayout.lockFile(zoneDir(db))
        var marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        marker.busy = true
        try rewriteCommitMarker(lock, marker)
    }
}
