import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The ancestor of a refused save (CloudKit's `CKRecordChangedErrorAncestorRecordKey`): a save refused with
/// `serverRecordChanged` carries the version the client's edit was based on, which is exactly
/// the version saved with the client's change tag, or none when the log no longer holds it.
/// Finding it reads a few of the log's entries, not the zone's history, and not under the
/// zone's lock, so one refused save does not hold up every other save to the zone.
@Suite struct ConflictAncestorTests {
    /// What an opening of a zone reads of its log, split by whether the reading thread held
    /// the zone's writer lock at the time.
    final class LogReads: @unchecked Sendable {
        /// Guards the two counts.
        private let lock = NSLock()
        private var under = 0
        private var outside = 0
        var bytesUnderLock: Int { lock.withLock { under } }
        var bytesOutsideLock: Int { lock.withLock { outside } }
        var bytes: Int { lock.withLock { under + outside } }
        func add(_ n: Int, underLock: Bool) { lock.withLock { if underLock { under += n } else { outside += n } } }
        func reset() { lock.withLock { under = 0; outside = 0 } }
    }

    func watch(_ storage: ZoneFolder) -> LogReads {
        let reads = LogReads()
        storage.observers.logRead = { [unowned storage] n in
            // The writer's lock is not recursive: a thread that holds it cannot take it again.
            let free = storage.writeLock.try()
            if free { storage.writeLock.unlock() }
            reads.add(n, underLock: !free)
        }
        return reads
    }

    /// Saves an edit of `base` (a version the server has moved past) and returns its error.
    func refuse(_ db: Database, _ base: Record, sourceLocation: SourceLocation = #_sourceLocation) throws -> CKError {
        var edited = base
        edited["edit"] = .string("client")
        let result = try db.modify(saving: [edited])
        let e = try #require(result.saveResults[0].1.error, sourceLocation: sourceLocation)
        #expect(e.code == .serverRecordChanged, sourceLocation: sourceLocation)
        return e
    }

    func logSize(_ db: Database) throws -> Int64 {
        try #require(try Syscall.stat(db.zoneFolder(ZoneID.defaultZoneName).logPath).get()).size
    }

    /// The sequence numbers the zone's log holds now.
    func loggedSeqs(_ db: Database) throws -> [Int64] {
        try db.zoneFolder(ZoneID.defaultZoneName).history().entries.map(\.seq)
    }

    /// A record edited many times, between saves of other records, some in batches: each old
    /// version is the ancestor of an edit based on it; a tag no entry gave this record
    /// (another record's, one past the log, not a number) has none.
    @Test func eachOldVersionIsTheAncestorOfAnEditBasedOnIt() throws {
        let t = try TempStore()
        let db = try t.db()
        var versions = [try db.save(record("n", ["v": .int64(0), "text": .string("first")]))]
        for i in 1...40 {
            try db.save(record("other\(i)", ["i": .int64(Int64(i))]))
            var next = versions.last!
            next["v"] = .int64(Int64(i))
            next["text"] = i % 3 == 0 ? nil : .string("edit \(i)")
            if i % 4 == 0 {
                // Saved in one entry with other records, one of them deleted.
                let result = try db.modify(saving: [record("batch\(i)"), next, record("batch\(i)b")], deleting: [id("other\(i)")])
                #expect(result.error == nil)
                versions.append(try result.saveResults[1].1.get())
            } else {
                versions.append(try db.save(next))
            }
        }
        for k in [0, 1, 4, 17, 20, 38, 39] {
            let e = try refuse(db, versions[k])
            #expect(e.ancestorRecordValue == versions[k], "version \(k)")
            #expect(e.serverRecordValue == versions.last)
        }
        let otherTag = try db.record(for: id("other1")).recordChangeTag!
        for tag in [otherTag, "9999", "0", "-1", "x7"] {
            var bogus = versions[3]
            bogus.recordChangeTag = tag
            let e = try refuse(db, bogus)
            #expect(e.ancestorRecordValue == nil, "tag \(tag)")
        }
    }

    /// After the log is compacted: a version whose entry the kept log still holds is found;
    /// one whose entry was cut away gives no ancestor (as CloudKit allows); both also from an
    /// opening made after the compaction.
    @Test func acrossLogCompaction() throws {
        let limit: Int64 = 8_000
        let t = try TempStore(tuning: .with { $0.compactLogBytes = limit })
        let db = try t.db()
        let v0 = try db.save(record("n", ["v": .int64(0)]))
        var v1 = v0
        v1["v"] = .int64(1)
        // Fill until a compaction has cut v0's entry away, then until the log is near its
        // limit, so v1, saved then, is among the newest half the next compaction keeps.
        var i = 0
        func pad() throws {
            try db.save(record("pad\(i)", ["pad": .string(String(repeating: "p", count: 200))]))
            i += 1
        }
        while try !loggedSeqs(db).isEmpty && loggedSeqs(db)[0] <= Int64(v0.recordChangeTag!)! { try pad() }
        while try logSize(db) < limit - 1_200 { try pad() }
        v1 = try db.save(v1)
        let before = try logSize(db)
        while try logSize(db) >= before { try pad() }
        var v2 = v1
        v2["v"] = .int64(2)
        v2 = try db.save(v2)
        let kept = try loggedSeqs(db)
        #expect(kept.contains(Int64(v1.recordChangeTag!)!), "v1's entry survived the compaction after it")
        #expect(kept[0] > Int64(v1.recordChangeTag!)! - 10, "the log was compacted after v1 was saved")
        #expect(!kept.contains(Int64(v0.recordChangeTag!)!))

        #expect(try refuse(db, v1).ancestorRecordValue == v1)
        #expect(try refuse(db, v0).ancestorRecordValue == nil)
        #expect(try refuse(db, v0).serverRecordValue == v2)

        let cold = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "cold"))
        #expect(try refuse(cold, v1).ancestorRecordValue == v1)
        #expect(try refuse(cold, v0).ancestorRecordValue == nil)
    }

    /// Two openings of one store, as two processes: each finds versions the other saved,
    /// also ones saved after its last look at the log.
    @Test func versionsSavedByAnotherProcess() throws {
        let t = try TempStore()
        let a = try t.db()
        let storeB = try t.reopen()
        let b = try storeB.container().database(.private, caller: Caller(userName: "alice", deviceID: "b"))
        var versions = [try a.save(record("n", ["v": .int64(0)]))]
        for i in 1...10 {
            var next = versions.last!
            next["v"] = .int64(Int64(i))
            versions.append(try (i % 2 == 0 ? a : b).save(next))
        }
        #expect(try refuse(b, versions[3]).ancestorRecordValue == versions[3])
        #expect(try refuse(a, versions[4]).ancestorRecordValue == versions[4])
        for i in 11...14 {
            var next = versions.last!
            next["v"] = .int64(Int64(i))
            versions.append(try a.save(next))
        }
        #expect(try refuse(b, versions[13]).ancestorRecordValue == versions[13])
        #expect(try refuse(b, versions[12]).serverRecordValue == versions[14])
    }

    /// After a machine crash: a version that only the journal held (the log lost it with the
    /// page cache) is back in the log after recovery, and is the ancestor again.
    @Test func versionOnlyTheJournalHeldAfterACrash() throws {
        let io = JournalTests.SyncRecordingIO()
        let t = try TempStore(io: io, tuning: .with { $0.journalBytes = 8_000 })
        let db = try t.db()
        let dir = db.zoneDirectory(ZoneID.defaultZoneName)
        let logPath = StoreLayout.logFile(dir)
        /// Where each entry of the log starts, by sequence number.
        func starts() throws -> [Int64: Int64] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: logPath)))
            let ends = LogScanner.scan(bytes, baseOffset: 0, zoneID: ZoneID(zoneName: ZoneID.defaultZoneName)).entries
            var starts: [Int64: Int64] = [:]
            for (i, e) in ends.enumerated() { starts[e.0.seq] = i > 0 ? ends[i - 1].end : 0 }
            return starts
        }
        // Edits until the last-but-one version's entry starts past what the log has synced:
        // only the journal holds it.
        var versions = [try db.save(record("n", ["v": .int64(0)]))]
        for i in 1...200 {
            try db.save(record("pad\(i)", ["pad": .string(String(repeating: "p", count: 200))]))
            var next = versions.last!
            next["v"] = .int64(Int64(i))
            versions.append(try db.save(next))
            let stale = Int64(versions[versions.count - 2].recordChangeTag!)!
            if i > 1, try starts()[stale]! >= io.syncedLogSize { break }
        }
        t.store.waitForRecordFiles()
        let stale = versions[versions.count - 2]
        try #require(try starts()[Int64(stale.recordChangeTag!)!]! >= io.syncedLogSize, "only the journal holds that version (else this test shows nothing)")

        try JournalTests().cutPower(dir, io: io)
        let cold = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "cold"))
        let e = try refuse(cold, stale)
        #expect(e.ancestorRecordValue == stale)
        #expect(e.serverRecordValue == versions.last)
    }

    /// The lookup by sequence number, against a whole parse of the same log: entries of very
    /// different sizes (batches of 300 records among single saves), and half an entry at the
    /// end (an append in progress), which is no entry yet.
    @Test func everyEntryIsFoundByItsNumberAndNoOtherIs() throws {
        let t = try TempStore()
        let db = try t.db()
        for i in 0..<40 {
            if i % 7 == 3 {
                let batch = (0..<300).map { record("b\(i)-\($0)", ["text": .string(String(repeating: "x", count: $0 % 50))]) }
                #expect(try db.modify(saving: batch).error == nil)
            } else {
                try db.save(record("s\(i)", ["v": .int64(Int64(i)), "seq": .string(#""seq":99"#)]))
            }
        }
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let path = storage.logPath
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let parsed = LogScanner.scan(whole, baseOffset: 0, zoneID: storage.zoneID).entries.map(\.0)
        #expect(parsed.map(\.seq) == Array(1...40))
        // Half of a next entry, as a writer in the middle of its append leaves it.
        var next = parsed.last!
        next.seq = 41
        let frame = next.frame()
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(frame[..<(frame.count / 2)]))
        try handle.close()

        for entry in parsed {
            let found = try #require(try storage.loggedEntry(seq: entry.seq), "entry \(entry.seq)")
            #expect(found.saved == entry.saved && found.deleted == entry.deleted && found.time == entry.time, "entry \(entry.seq)")
        }
        for seq: Int64 in [-1, 0, 41, 42, 1_000] {
            #expect(try storage.loggedEntry(seq: seq) == nil, "entry \(seq)")
        }
    }

    /// The cost: a zone of 20,000 entries of other records, and a record saved at its start
    /// and edited at its end. An edit of the first version is refused with that version as
    /// its ancestor, having read under 1% of the log, and none of it under the zone's lock,
    /// from this opening and from a new one.
    @Test func aRefusedSaveReadsAFewEntriesOutsideTheLock() throws {
        let t = try TempStore()
        let db = try t.db()
        let first = try db.save(record("n", ["v": .int64(0)]))
        for i in 0..<20_000 { try db.save(record("r\(i)", ["i": .int64(Int64(i))])) }
        var last = first
        last["v"] = .int64(1)
        last = try db.save(last)
        t.store.waitForRecordFiles()
        let size = try logSize(db)

        let reads = watch(db.zoneFolder(ZoneID.defaultZoneName))
        let e = try refuse(db, first)
        #expect(e.ancestorRecordValue == first)
        #expect(e.serverRecordValue == last)
        #expect(reads.bytesUnderLock == 0, "read \(reads.bytesUnderLock) bytes of the log under the zone's lock")
        #expect(reads.bytes * 100 < size, "read \(reads.bytes) of the log's \(size) bytes")

        let cold = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "cold"))
        let coldReads = watch(cold.zoneFolder(ZoneID.defaultZoneName))
        let e2 = try refuse(cold, first)
        #expect(e2.ancestorRecordValue == first)
        #expect(coldReads.bytesUnderLock == 0, "read \(coldReads.bytesUnderLock) bytes of the log under the zone's lock")
        #expect(coldReads.bytes * 100 < size, "read \(coldReads.bytes) of the log's \(size) bytes")
    }
}
