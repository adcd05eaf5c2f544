import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Durability with record files written behind the commit: every reader sees every
/// acknowledged save whether or not its file is written yet, files end in log order however
/// writers take turns, and a save is on disk (in the log) before it returns.
@Suite struct ZoneFolderWriteBehindTests {
    typealias FaultyIO = DurabilityTests.FaultyIO

    func zoneDir(_ db: Database) -> String { db.zoneDirectory(ZoneID.defaultZoneName) }
    func fileExists(_ db: Database, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: StoreLayout.recordFile(zoneDir(db), name: name))
    }

    /// The applier cannot write a's file; another opening of the store still fetches, lists
    /// and counts a, from the log, and its next commit writes the file.
    @Test func aSaveWhoseFileIsNotWrittenIsSeenByEveryReader() throws {
        let plan = LockedBox((suffix: "/records/a.json", op: "rename", errno: ENOSPC, times: 1))
        let t = try TempStore(io: FaultyIO(plan: plan))
        let db = try t.db()
        try db.save(record("a", ["v": .int64(1)]))
        t.store.waitForRecordFiles()
        #expect(!fileExists(db, "a"), "the injected failure kept the file from being written")
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        #expect(try other.record(for: id("a"))["v"] == .int64(1))
        #expect(try other.recordCount() == 1)
        #expect(try other.allRecords().map(\.recordID.recordName) == ["a"])
        try other.save(record("b"))
        #expect(fileExists(db, "a"), "the next writer applied the entry before its own")
        #expect(t.store.check().isClean)
    }

    /// A batch of 200 files is written by two threads. Every file lands holding its
    /// record; one that cannot be written stops both threads, the entry stays unapplied,
    /// every reader still sees all 200, and the next writer writes the files.
    @Test func aLargeBatchIsWrittenByTwoThreadsAndAFailedFileIsWrittenByTheNextWriter() throws {
        let plan = LockedBox((suffix: "/records/n-137.json", op: "rename", errno: ENOSPC, times: 1))
        let t = try TempStore(io: FaultyIO(plan: plan))
        let db = try t.db()
        let batch = (0..<200).map { record("n-\($0)", ["v": .int64(Int64($0))]) }
        #expect(try db.modify(saving: batch).error == nil)
        t.store.waitForRecordFiles()
        #expect(!fileExists(db, "n-137"), "the injected failure kept the file from being written")
        let otherStore = try t.reopen()
        let other = try otherStore.container().database(.private, caller: Caller(userName: "alice"))
        #expect(try other.recordCount() == 200)
        #expect(try other.record(for: id("n-137"))["v"] == .int64(137))
        try other.save(record("after"))
        otherStore.waitForRecordFiles()
        let names = try FileManager.default.contentsOfDirectory(atPath: zoneDir(db) + "/records")
        #expect(Set(names) == Set((0..<200).map { "n-\($0).json" } + ["after.json"]), "every file, no temp file")
        for i in [0, 1, 137, 198, 199] {
            let path = StoreLayout.recordFile(zoneDir(db), name: "n-\(i)")
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(try ZoneFolder.decodeRecordFile(bytes, path: path)["v"] == .int64(Int64(i)))
        }
        #expect(t.store.check().isClean)
    }

    @Test func aDeleteWhoseFileIsNotRemovedIsSeenByEveryReader() throws {
        let plan = LockedBox((suffix: "", op: "", errno: Int32(0), times: 0))
        let t = try TempStore(io: FaultyIO(plan: plan))
        let db = try t.db()
        try db.save(record("a"))
        try db.save(record("keep"))
        t.store.waitForRecordFiles()
        // Fail the applier on the next file it writes: "keep" saved again with the delete.
        plan.mutate { $0 = ("/records/keep.json", "rename", ENOSPC, 1) }
        var keep = try db.record(for: id("keep"))
        keep["v"] = .int64(2)
        _ = try db.modify(saving: [keep], deleting: [id("a")])
        t.store.waitForRecordFiles()
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        #expect(try other.allRecords().map(\.recordID.recordName) == ["keep"])
        #expect(other.fetch([id("a")])[0].1.error?.code == .unknownItem)
        #expect(try other.record(for: id("keep"))["v"] == .int64(2))
    }

    /// Two openings (as two processes) take turns saving one record: each commit applies the
    /// other's entries first, under the apply marker's byte-range lock, so the file always
    /// ends with the last version.
    @Test func writersTakingTurnsLeaveTheFilesInLogOrder() throws {
        let t = try TempStore()
        let a = try t.db()
        let otherStore = try t.reopen()
        let b = try otherStore.container().database(.private, caller: Caller(userName: "alice"))
        try a.save(record("r", ["v": .int64(0)]))
        for i in 1...60 {
            let db = i % 2 == 0 ? a : b
            var r = try db.record(for: id("r"))
            r["v"] = .int64(Int64(i))
            try db.save(r)
        }
        t.store.waitForRecordFiles()
        otherStore.waitForRecordFiles()
        let path = StoreLayout.recordFile(zoneDir(a), name: "r")
        let file = try ZoneFolder.decodeRecordFile(Array(FileManager.default.contents(atPath: path)!), path: path)
        #expect(file["v"] == .int64(60))
        #expect(file.recordChangeTag == "61")
        let report = t.store.check()
        #expect(report.isClean)
        #expect(!report.repaired.contains { $0.contains("rewrote") }, "\(report.repaired)")
    }

    /// A reader that took in versions the files lacked (another opening's applier had not
    /// written them yet) drops them once that applier has, with nothing appended since: its
    /// reads then go to the files and the cache, within the cache's budget, where they were
    /// answered from the versions kept, outside it, until the zone's next save.
    @Test func aReaderDropsTheVersionsAnotherApplierWroteSince() throws {
        let t = try TempStore()
        let writer = try t.db()
        try writer.save(record("first"))
        t.store.waitForRecordFiles()
        // The writer's applier waits until the reader has taken the entry in.
        let writerStorage = writer.zoneFolder(ZoneID.defaultZoneName)
        let gate = DispatchSemaphore(value: 0)
        writerStorage.applyQueue.async { gate.wait() }
        _ = try writer.modify(saving: (0..<20).map { record("r\($0)", ["v": .int64(Int64($0))]) })
        #expect(!fileExists(writer, "r0"))

        let reader = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let storage = reader.zoneFolder(ZoneID.defaultZoneName)
        #expect(try reader.record(for: id("r3"))["v"] == .int64(3))
        #expect(storage.state.withLock { state in state.unapplied.count } == 20, "the reader answers from the entry")

        gate.signal()
        t.store.waitForRecordFiles()
        #expect(fileExists(writer, "r0"))
        for i in 0..<20 { #expect(try reader.record(for: id("r\(i)"))["v"] == .int64(Int64(i))) }
        let (kept, cached) = storage.state.withLock { state in (state.unapplied.count, state.cache.count) }
        #expect(kept == 0, "\(kept) versions kept that the files hold")
        #expect(cached >= 20, "the records read are cached: \(cached)")
    }

    /// Without write-behind the file is there when the save returns.
    @Test func withoutWriteBehindTheFileIsWrittenBeforeTheSaveReturns() throws {
        let t = try TempStore(tuning: .with { $0.writeBehind = false })
        let db = try t.db()
        for i in 0..<20 {
            try db.save(record("n\(i)"))
            #expect(fileExists(db, "n\(i)"))
        }
    }

    /// Many saves in a row: each is in the log when it returns, and the files catch up.
    @Test func aStreamOfSavesEndsWithEveryFileWritten() throws {
        let t = try TempStore()
        let db = try t.db()
        for i in 0..<300 { try db.save(record("s\(i)", ["i": .int64(Int64(i))])) }
        let log = try String(contentsOfFile: StoreLayout.logFile(zoneDir(db)), encoding: .utf8)
        #expect(log.split(separator: "\n").count == 300, "every save is its own durable log entry")
        t.store.waitForRecordFiles()
        for i in stride(from: 0, to: 300, by: 37) { #expect(fileExists(db, "s\(i)")) }
        let lock = try #require(FileManager.default.contents(atPath: StoreLayout.lockFile(zoneDir(db))))
        let apply = try #require(ApplyMarker(bytes: Array(lock)[ApplyMarker.offset...]))
        #expect(apply.applied == 300)
        #expect(t.store.check().isClean)
    }
}
