import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A reader that opens a zone's index checks that its state is of this log
/// (``ZoneFolder/isLogged(_:)``): from the log's last bytes when the state notes its entry's
/// checksum, however large that entry; by reading the entry whole when it does not (an index
/// an older ckfs wrote) or when the bytes differ. Either way the answers are the records'.
@Suite struct IndexStateCheckTests {
    typealias Counter = ChangePageTests.Counter

    /// A batch whose log line is about 330 KB, saved as one entry.
    static func saveBatch(_ db: Database, round: Int) throws {
        let text = FieldValue.string(String(repeating: "lorem ipsum ", count: 90))
        let records = (0..<300).map { i in
            record("r\(round)-\(i)", type: "Thing", ["text": text, "n": .int64(Int64(round * 1_000 + i))])
        }
        if let e = try db.modify(saving: records, options: ModifyOptions(savePolicy: .allKeys)).error { throw e }
        db.store.waitForRecordFiles()
    }

    /// A query from a new opening that reads zones from their index: its answer, how many
    /// bytes of the log it read, and whether it made the index again.
    static func coldQuery(_ t: TempStore) throws -> (names: [String], logBytes: Int, rebuilt: Bool) {
        let db = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice", deviceID: "other"))
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let reads = Counter()
        let rebuilds = Counter()
        storage.observers.logRead = { reads.add($0) }
        storage.observers.zoneRead = { rebuilds.add(1) }
        let page = try db.query(RecordQuery(recordType: "Thing", sortDescriptors: [QuerySortDescriptor(key: "n", ascending: false)]), limit: 3)
        #expect(storage.indexSlot.file != nil, "the index answered")
        return (page.records.map(\.recordID.recordName), reads.value, rebuilds.value > 0)
    }

    static func logLastLineBytes(_ db: Database) throws -> Int {
        let log = try #require(try Syscall.readFile(db.zoneFolder(ZoneID.defaultZoneName).logPath).get())
        return log.dropLast().split(separator: 0x0A).last?.count ?? 0
    }

    @Test func aColdReaderChecksTheIndexFromTheLogsLastBytes() throws {
        let t = try TempStore()
        let db = try t.db()
        try Self.saveBatch(db, round: 1)
        // Made after the batch: the rebuild's state takes the checksum from the log.
        _ = try #require(db.zoneFolder(ZoneID.defaultZoneName).currentIndex())
        let line = try Self.logLastLineBytes(db)
        try #require(line > 300_000, "the batch's line is \(line) bytes")
        var cold = try Self.coldQuery(t)
        #expect(cold.names == ["r1-299", "r1-298", "r1-297"] && !cold.rebuilt)
        #expect(cold.logBytes > 0 && cold.logBytes <= Int(LogSeeker.tailStampBytes), "read \(cold.logBytes) bytes of the log, its last line \(line)")

        // Taken in by the writer's applier: the state notes the committed entry's checksum.
        try Self.saveBatch(db, round: 2)
        cold = try Self.coldQuery(t)
        #expect(cold.names == ["r2-299", "r2-298", "r2-297"] && !cold.rebuilt)
        #expect(cold.logBytes > 0 && cold.logBytes <= Int(LogSeeker.tailStampBytes), "read \(cold.logBytes) bytes of the log after the applier's update")
    }

    @Test func aStateWithoutItsChecksumIsCheckedFromTheWholeEntry() throws {
        let t = try TempStore()
        let db = try t.db()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        try Self.saveBatch(db, round: 1)
        let path = try #require(storage.currentIndex()).path
        let line = try Self.logLastLineBytes(db)
        func change(_ sql: String) throws {
            let index = try SQLiteDatabase(path: path, durability: .rebuildable, create: false)
            try index.execute(sql)
        }

        // Another checksum: the entry is read whole, its time and device hold, the index is kept.
        try change("UPDATE state SET checksum = (checksum + 1) % 4294967296")
        var cold = try Self.coldQuery(t)
        #expect(cold.names == ["r1-299", "r1-298", "r1-297"] && !cold.rebuilt)
        #expect(cold.logBytes >= line, "read \(cold.logBytes) bytes for a \(line)-byte entry")

        // An index an older ckfs made: no checksum column. Read as before; the next state
        // written (by a new opening, as its statements are prepared for the table as it is
        // then) adds the column.
        try change("ALTER TABLE state DROP COLUMN checksum")
        cold = try Self.coldQuery(t)
        #expect(cold.names == ["r1-299", "r1-298", "r1-297"] && !cold.rebuilt)
        #expect(cold.logBytes >= line, "read \(cold.logBytes) bytes without the column")
        try Self.saveBatch(try t.reopen().container().database(.private, caller: Caller(userName: "alice")), round: 2)
        cold = try Self.coldQuery(t)
        #expect(cold.names == ["r2-299", "r2-298", "r2-297"] && !cold.rebuilt)
        #expect(cold.logBytes > 0 && cold.logBytes <= Int(LogSeeker.tailStampBytes), "read \(cold.logBytes) bytes once the column is back")

        // An older ckfs took the entry in (its state has no checksum): read whole again.
        try change("UPDATE state SET checksum = NULL")
        cold = try Self.coldQuery(t)
        #expect(cold.names == ["r2-299", "r2-298", "r2-297"] && !cold.rebuilt)
        #expect(cold.logBytes >= line, "read \(cold.logBytes) bytes with no checksum noted")
    }

    /// The log's last entry is of another history with the same number (a restored zone went on
    /// without this index): neither its last bytes nor its time match, and the index is made
    /// again.
    @Test func anIndexOfAnotherHistoryIsNotTrustedFromTheLastBytes() throws {
        let t = try TempStore()
        let db = try t.db()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        try Self.saveBatch(db, round: 1)
        let zone = (storage.indexPath as NSString).deletingLastPathComponent
        let zoneBackup = t.path + "/zone-backup"
        try FileManager.default.copyItem(atPath: zone, toPath: zoneBackup)
        try Self.saveBatch(db, round: 2)
        let index = try #require(storage.currentIndex()).path
        let indexBackup = t.path + "/index-backup.sqlite"
        try ZoneIndexFileTests.copyIndex(index, to: indexBackup)

        // The zone as it was after round 1, then a round of its own: entry 2 again, other records.
        try FileManager.default.removeItem(atPath: zone)
        try FileManager.default.copyItem(atPath: zoneBackup, toPath: zone)
        usleep(5_000)
        try Self.saveBatch(try t.reopen().container().database(.private, caller: Caller(userName: "alice")), round: 3)
        ZoneIndexFileTests.removeIndex(index)
        try ZoneIndexFileTests.copyIndex(indexBackup, to: index)
        let cold = try Self.coldQuery(t)
        #expect(cold.names == ["r3-299", "r3-298", "r3-297"] && cold.rebuilt)
    }
}
