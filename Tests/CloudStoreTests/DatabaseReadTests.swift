import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Fetches, zones and changes.
@Suite struct DatabaseReadTests {
    @Test func fetchByIDWithDesiredKeys() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a", ["x": .int64(1), "y": .string("y"), "z": .double(2)]))
        let results = db.fetch([id("a"), id("missing"), id("a", zone: "nozone")], desiredKeys: ["x", "z"])
        let a = try results[0].1.get()
        #expect(a.allKeys == ["x", "z"])
        #expect(a.recordChangeTag != nil)
        #expect(results[1].1.error?.code == .unknownItem)
        #expect(results[2].1.error?.code == .zoneNotFound)
    }

    /// The zones folder's listing is kept once the folder has been still for two seconds
    /// (saves listed it for the quota); a zone made or deleted after that, here or by
    /// another opening of the store, still shows at once.
    @Test func aKeptZoneListingFollowsZonesMadeAndDeletedLater() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("A")
        Thread.sleep(forTimeInterval: 2.2)
        #expect(try db.zones().map(\.zoneID.zoneName) == ["A", "_defaultZone"])
        #expect(try db.zones().map(\.zoneID.zoneName) == ["A", "_defaultZone"], "kept")
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        try other.createZone("B")
        #expect(try db.zones().map(\.zoneID.zoneName) == ["A", "B", "_defaultZone"])
        try other.deleteZone("A")
        #expect(try db.zones().map(\.zoneID.zoneName) == ["B", "_defaultZone"])
    }

    @Test func zonesAreCreatedListedAndDeletedWithTheirRecords() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("Work")
        try db.createZone("Work")
        #expect(try db.zones().map(\.zoneID.zoneName) == ["Work", "_defaultZone"])
        #expect(try db.zone("Work").capabilities.contains("atomic"))
        try db.save(record("w", zone: "Work"))
        let token = try db.changes(in: "Work", since: nil).token
        try db.deleteZone("Work")
        #expect(try db.zones().map(\.zoneID.zoneName) == ["_defaultZone"])
        #expect(db.fetch([id("w", zone: "Work")])[0].1.error?.code == .zoneNotFound)
        let save = try db.modify(saving: [record("w", zone: "Work")])
        #expect(save.saveResults[0].1.error?.code == .zoneNotFound)
        try db.createZone("Work")
        #expect(db.fetch([id("w", zone: "Work")])[0].1.error?.code == .unknownItem, "deleting a zone deleted its records")
        #expect { try db.changes(in: "Work", since: token) } throws: { ($0 as? CKError)?.code == .changeTokenExpired }
        #expect { try db.deleteZone(ZoneID.defaultZoneName) } throws: { ($0 as? CKError)?.code == .invalidArguments }
        #expect { try db.deleteZone("never") } throws: { ($0 as? CKError)?.code == .zoneNotFound }
        #expect { try t.db(.public).createZone("Pub") } throws: { ($0 as? CKError)?.code == .invalidArguments }
    }

    @Test func changesSinceATokenInOrder() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a", ["v": .int64(1)]))
        let first = try db.changes(since: nil)
        #expect(first.changed.map(\.recordID.recordName) == ["a"])
        var b = try db.save(record("b", ["v": .int64(1)]))
        try db.save(record("c"))
        b["v"] = .int64(2)
        try db.save(b)
        try db.delete(id("a"))
        let next = try db.changes(since: first.token)
        #expect(next.changed.map(\.recordID.recordName) == ["c", "b"], "each record once, in the order of its last change")
        #expect(next.changed.last?["v"] == .int64(2))
        #expect(next.deleted.map(\.recordName) == ["a"])
        #expect(next.moreComing == false)
        let none = try db.changes(since: next.token)
        #expect(none.changed.isEmpty && none.deleted.isEmpty)
        #expect(none.token == next.token)
        // Deleted, then saved again: a change, not a deletion.
        try db.save(record("a"))
        #expect(try db.changes(since: next.token).changed.map(\.recordID.recordName) == ["a"])
        // Paging.
        let paged = try db.changes(since: first.token, limit: 1)
        #expect(paged.moreComing)
        #expect(paged.changed.map(\.recordID.recordName) == ["b"])
    }

    @Test func tokensOlderThanTheKeptHistoryExpire() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 4_000; $0.checkpointEvery = 3 })
        let db = try t.db()
        try db.save(record("first"))
        let old = try db.changes(since: nil).token
        try savePadded(db, count: 40)
        #expect { try db.changes(since: old) } throws: { ($0 as? CKError)?.code == .changeTokenExpired }
        let fresh = try db.changes(since: nil)
        #expect(fresh.changed.count == 41)
        try db.save(record("after"))
        #expect(try db.changes(since: fresh.token).changed.map(\.recordID.recordName) == ["after"])
        #expect(t.store.check().isClean)
    }

    /// Each opening keeps the log open between commits; when another opening compacts
    /// the log or deletes and makes the zone again, the next commit goes to the new log, not
    /// to the replaced one: every acknowledged save is there for a third opening.
    @Test func commitsFollowALogReplacedByAnotherOpening() throws {
        let tuning = ZoneTuning.with { $0.compactLogBytes = 3_000; $0.checkpointEvery = 2 }
        let t = try TempStore(tuning: tuning)
        let a = try t.db()
        let b = try t.reopen(tuning: tuning).container().database(.private, caller: Caller(userName: "alice", deviceID: "b"))
        try a.createZone("Work")
        var saved: [String] = []
        for i in 0..<30 {
            let (db, name) = i % 3 == 0 ? (b, "b\(i)") : (a, "a\(i)")
            try db.save(record(name, zone: "Work", ["pad": .string(String(repeating: "p", count: 300))]))
            saved.append(name)
        }
        let before = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        #expect(Set(try before.changes(in: "Work", since: nil).changed.map(\.recordID.recordName)) == Set(saved))
        try b.deleteZone("Work")
        try b.createZone("Work")
        try a.save(record("after", zone: "Work"))
        let third = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        #expect(try third.changes(in: "Work", since: nil).changed.map(\.recordID.recordName) == ["after"])
        #expect(try third.record(for: id("after", zone: "Work"))["pad"] == nil)
        #expect(t.store.check().isClean)
    }

    /// A reader from the zone's index keeps `zone.json` as it last read it while the file is
    /// unchanged; a zone another opening deletes and makes again is a new zone to it at once,
    /// and so is a checkpoint that rewrites the file.
    @Test func anIndexedReaderSeesAZoneMadeAgain() throws {
        let tuning = ZoneTuning.with { $0.checkpointEvery = 2 }
        let t = try TempStore(tuning: tuning)
        let writer = try t.db()
        try writer.createZone("Work")
        try writer.save(record("old", zone: "Work", ["n": .int64(1)]))
        let reader = try t.reopen(tuning: tuning, reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        func names() throws -> [String] {
            try reader.query(RecordQuery(recordType: "Note"), in: "Work").records.map(\.recordID.recordName).sorted()
        }
        #expect(try names() == ["old"])
        #expect(try names() == ["old"])
        try writer.deleteZone("Work")
        try writer.createZone("Work")
        for i in 0..<5 { try writer.save(record("new\(i)", zone: "Work", ["n": .int64(Int64(i))])) }
        #expect(try names() == (0..<5).map { "new\($0)" })
        #expect(throws: CKError.self) { try reader.record(for: id("old", zone: "Work")) }
        try writer.save(record("later", zone: "Work"))
        #expect(try names() == ["later"] + (0..<5).map { "new\($0)" })
    }

    /// A zone deleted and made again by another opening between two reads is never taken for
    /// the old one grown: the new log, `zone.json` and lock often get the old files' inodes
    /// back (ext4 hands a freed inode out again at once), and a reader that told versions apart
    /// by inode alone kept the old zone's records. Each round reads the old record (cached),
    /// then asks for it after the zone is made again with more entries than before.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func aZoneMadeAgainIsNeverTakenForTheOldOne(_ reading: ZoneReading) throws {
        let t = try TempStore()
        let writer = try t.db()
        let reader = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice"))
        for round in 0..<40 {
            try writer.createZone("Work")
            try writer.save(record("old", zone: "Work", ["n": .int64(Int64(round))]))
            let fetched = reader.fetch([id("old", zone: "Work")])[0].1
            #expect((try? fetched.get())?["n"] == .int64(Int64(round)), "round \(round): \(fetched)")
            try writer.deleteZone("Work")
            try writer.createZone("Work")
            for i in 0..<3 { try writer.save(record("new\(i)", zone: "Work")) }
            #expect(throws: CKError.self, "round \(round)") { try reader.record(for: id("old", zone: "Work")) }
            try writer.deleteZone("Work")
        }
    }

    @Test func anotherProcessesCommitsAreSeenAtOnce() throws {
        let t = try TempStore()
        let mine = try t.db()
        try mine.save(record("a", ["v": .int64(1)]))
        #expect(try mine.record(for: id("a"))["v"] == .int64(1))
        // A second Store object has its own caches, as another process would.
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "other"))
        var a = try other.record(for: id("a"))
        a["v"] = .int64(2)
        try other.save(a)
        try other.delete(id("a"))
        try other.save(record("a", ["v": .int64(3)]))
        #expect(try mine.record(for: id("a"))["v"] == .int64(3))
    }
}
