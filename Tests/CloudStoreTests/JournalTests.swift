import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Durability with the journal: a save made durable in `journal` and not yet in the synced part
/// of `log.jsonl` survives a machine crash, built by hand as the disk would hold it: the log
/// cut back to its last sync, the record files gone (never synced), the markers of another boot.
@Suite struct JournalTests {
    /// Passes every call to the real thing and notes the log's size at each sync of it: what a
    /// power cut would leave of the log.
    final class SyncRecordingIO: StorageIO, @unchecked Sendable {
        let real = PosixIO()
        /// Guards the two counters.
        let lock = NSLock()
        private var synced: Int64 = 0
        private var syncs: [String: Int] = [:]

        var syncedLogSize: Int64 { lock.withLock { synced } }
        func syncCount(_ suffix: String) -> Int { lock.withLock { syncs.filter { $0.key.hasSuffix(suffix) }.map(\.value).reduce(0, +) } }

        func write(_ fd: Int32, _ bytes: [UInt8], path: String) -> Result<Void, SystemCallError> { real.write(fd, bytes, path: path) }
        func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError> { real.rename(from, to) }
        func sync(_ fd: Int32, path: String, dataOnly: Bool) -> Result<Void, SystemCallError> {
            let result = real.sync(fd, path: path, dataOnly: dataOnly)
            lock.withLock {
                syncs[path, default: 0] += 1
                if path.hasSuffix("/log.jsonl"), case .success(let st) = Syscall.fstat(fd, path: path) { synced = max(synced, st.size) }
            }
            return result
        }
    }

    /// What the disk holds after a power cut: the log as of its last sync, no record files, the
    /// markers of an earlier boot (the journal was synced at every commit that used it).
    func cutPower(_ dir: String, io: SyncRecordingIO) throws {
        let log = StoreLayout.logFile(dir)
        #expect(truncate(log, off_t(io.syncedLogSize)) == 0)
        let records = StoreLayout.recordsDirectory(dir)
        for name in try FileManager.default.contentsOfDirectory(atPath: records) {
            try FileManager.default.removeItem(atPath: records + "/" + name)
        }
        let lock = StoreLayout.lockFile(dir)
        var marker = try #require(CommitMarker(bytes: Array(FileManager.default.contents(atPath: lock)!)))
        marker.bootID = "an-earlier-boot"
        try rewriteCommitMarker(lock, marker)
    }

    /// The entries framed at the start of the zone's journal, each after the one before: what
    /// recovery would read (its own reader).
    static func frames(_ dir: String) throws -> [LogEntry] {
        let storage = ZoneFolder(directory: dir, zoneID: ZoneID(zoneName: ZoneID.defaultZoneName), io: PosixIO(), tuning: ZoneTuning())
        return try storage.journalFrames().map(\.entry)
    }

    func logLines(_ dir: String) throws -> Int {
        try String(contentsOfFile: StoreLayout.logFile(dir), encoding: .utf8).split(separator: "\n").count
    }

    /// One writer: after the first save every save goes to the journal, which starts again
    /// (a log sync) when full; a reader that opens the zone after the "reboot" sees them all.
    @Test func aPowerCutLosesNoSaveTheJournalHeld() throws {
        let io = SyncRecordingIO()
        let t = try TempStore(io: io, tuning: .with { $0.journalBytes = 8_000 })
        let db = try t.db()
        let dir = db.zoneDirectory(ZoneID.defaultZoneName)
        for i in 0..<60 { try db.save(record("n\(i)", ["v": .int64(Int64(i)), "pad": .string(String(repeating: "p", count: 200))])) }
        t.store.waitForRecordFiles()
        // About 8,000 / 700 bytes a frame: a log sync every 11 saves or so, not one a save.
        #expect(io.syncCount("/journal") >= 50)
        #expect(io.syncCount("/log.jsonl") <= 8)
        #expect(io.syncedLogSize < Int64(try Data(contentsOf: URL(fileURLWithPath: StoreLayout.logFile(dir))).count),
                "the log's end is durable only through the journal (else this test shows nothing)")

        try cutPower(dir, io: io)
        let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        let fetched = reader.fetch((0..<60).map { id("n\($0)") })
        #expect(fetched.allSatisfy { (try? $0.1.get()) != nil }, "missing: \(fetched.filter { $0.1.error != nil }.map(\.0.recordName))")
        #expect(try reader.record(for: id("n59"))["v"] == .int64(59))
        #expect(try logLines(dir) == 60, "recovery appended the journal's entries to the log")
        #expect(t.store.check().isClean)
        try reader.save(record("after"))
        #expect(try reader.record(for: id("after")).recordChangeTag == "61")
    }

    /// Two writers taking turns (two openings, as two processes): a writer uses the journal
    /// only after its own commit, so whoever wrote last, nothing is lost.
    @Test func writersTakingTurnsLoseNothingToAPowerCut() throws {
        let io = SyncRecordingIO()
        let tuning = ZoneTuning.with { $0.journalBytes = 8_000 }
        let t = try TempStore(io: io, tuning: tuning)
        let a = try t.db()
        let storeB = try t.reopen(io: io, tuning: tuning)
        let b = try storeB.container().database(.private, caller: Caller(userName: "alice", deviceID: "b"))
        var names: [String] = []
        for round in 0..<12 {
            let (writer, runs) = round % 2 == 0 ? (a, 1 + round % 5) : (b, 1 + (round * 7) % 4)
            for k in 0..<runs {
                let name = "r\(round)-\(k)"
                try writer.save(record(name, ["v": .int64(Int64(round))]))
                names.append(name)
            }
        }
        // Both openings write their record files behind; the power cut below lists and removes
        // the records folder, so neither may still be renaming temp files into it.
        t.store.waitForRecordFiles()
        storeB.waitForRecordFiles()
        let dir = a.zoneDirectory(ZoneID.defaultZoneName)
        #expect(io.syncedLogSize < Int64(try Data(contentsOf: URL(fileURLWithPath: StoreLayout.logFile(dir))).count))
        try cutPower(dir, io: io)
        let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        let fetched = reader.fetch(names.map { id($0) })
        #expect(fetched.allSatisfy { (try? $0.1.get()) != nil }, "missing: \(fetched.filter { $0.1.error != nil }.map(\.0.recordName))")
        #expect(try logLines(dir) == names.count)
        #expect(t.store.check().isClean)
    }

    /// A journal whose entries do not follow on from the log's end is not this log's (files
    /// copied while the store was written): it is set aside, kept, and reported, and the zone
    /// opens as its log has it.
    @Test func aJournalThatSkipsEntriesIsSetAsideAndReported() throws {
        let io = SyncRecordingIO()
        let t = try TempStore(io: io)
        let db = try t.db()
        for i in 0..<5 { try db.save(record("n\(i)")) }
        t.store.waitForRecordFiles()
        let dir = db.zoneDirectory(ZoneID.defaultZoneName)
        try cutPower(dir, io: io)
        // Take away the journal's first frame: its entries now start at 3, the log ends at 1.
        let journal = StoreLayout.journalFile(dir)
        var bytes = Array(FileManager.default.contents(atPath: journal)!)
        let firstEnd = try #require(bytes.firstIndex(of: 0x0A))
        bytes.removeSubrange(0...firstEnd)
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        let report = try t.reopen().check()
        #expect(report.isClean)
        #expect(report.repaired.contains { $0.contains("entries 3...5 do not follow on from the log's last entry (1)") }, "\(report.repaired)")
        #expect(FileManager.default.contents(atPath: journal + ".unmatched") == Data(bytes), "kept as it was")
        let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        #expect((try? reader.record(for: id("n0"))) != nil)
        #expect(reader.fetch([id("n4")])[0].1.error?.code == .unknownItem)
        try reader.save(record("after"))
        #expect(try reader.record(for: id("after")).recordChangeTag == "2")
    }
}
