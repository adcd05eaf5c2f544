import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudStore

/// The catalog of a zone that follows the zone's log (used by the mount): holding the records
/// in memory, or answering from the index file and the storage. Most tests run both ways.
@Suite struct ZoneCatalogTests {
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func followsWritesOfAnotherOpeningAndReportsWhatChanged(reading: ZoneReading) throws {
        let t = try TempStore()
        let writer = try t.db()
        try writer.save(record("a", ["n": .int64(1)]))
        let reader = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice"))
        let catalog = reader.catalog(ZoneID.defaultZoneName)
        #expect(try catalog.refresh() == .reloaded)
        #expect(try catalog.record(named: "a")?["n"] == .int64(1))
        #expect(try catalog.refresh() == .none)

        try writer.save(record("b", type: "Task"))
        let a = try writer.record(for: id("a"))
        _ = try writer.modify(saving: [a.replacingFields(["n": .int64(2)])])
        #expect(try catalog.refresh() == .records(["a": "Note", "b": "Task"]))
        #expect(try catalog.record(named: "a")?["n"] == .int64(2))
        #expect(try catalog.recordTypes() == ["Note", "Task"])

        try writer.delete(id("b"))
        #expect(try catalog.refresh() == .records(["b": "Task"]))
        #expect(try catalog.names(ofType: "Task").isEmpty)
        #expect(try catalog.allRecords().count == 1)
        // The last record of a type gone, the type is gone (counted, not scanned).
        #expect(try catalog.recordTypes() == ["Note"])
        #expect(try !catalog.hasRecords(ofType: "Task") && catalog.hasRecords(ofType: "Note"))
    }

    /// A zone's catalog holds its zone and the zone keeps its catalog: a zone deleted lets
    /// both go (with the files the zone holds open), and a zone made again of that name is
    /// another, read from its own log.
    @Test func aDeletedZoneLetsItsFolderAndCatalogGo() throws {
        let t = try TempStore()
        let db = try t.db()
        weak var deletedZone: ZoneFolder?
        weak var deletedCatalog: ZoneFileCatalog?
        try {
            try db.createZone("Doomed")
            try db.save(record("b", zone: "Doomed"))
            #expect(try db.query(RecordQuery(recordType: "Note"), in: "Doomed").records.count == 1)
            deletedZone = db.zoneFolder("Doomed")
            deletedCatalog = db.fileCatalog("Doomed")
            #expect(deletedCatalog?.holdsRecords == true)
        }()
        db.store.waitForRecordFiles()  // the applier holds a zone while it writes
        #expect(deletedZone != nil && deletedCatalog != nil, "the store keeps a zone it opened")
        try db.deleteZone("Doomed")
        #expect(deletedZone == nil && deletedCatalog == nil, "a zone deleted is let go with its catalog")
        try db.createZone("Doomed")
        #expect(try db.query(RecordQuery(recordType: "Note"), in: "Doomed").records.isEmpty)
    }

    /// The catalog takes in the entries its process parsed (its own commits, and what the
    /// storage read of another process's), reading the log only for the rest: the mount no
    /// longer parses each save it makes back from the log, nor another's twice. Interleaved,
    /// the kinds come in log order.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func parsedEntriesAreTakenInWithoutReadingTheLogAgain(reading: ZoneReading) throws {
        let t = try TempStore()
        let store = try t.reopen(reading: reading)
        let db = try store.container().database(.private, caller: Caller(userName: "alice"))
        try db.save(record("a", ["n": .int64(1)]))
        let catalog = db.catalog(ZoneID.defaultZoneName)
        #expect(try catalog.refresh() == .reloaded)
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let read = Mutex(0)
        storage.observers.logRead = { n in read.withLock { $0 += n } }

        _ = try db.modify(saving: [record("b", type: "Task"), try db.record(for: id("a")).replacingFields(["n": .int64(2)])])
        try db.delete(id("b"))
        // Counted over the refresh alone, once the applier is done: it may read the log to
        // bring the index up.
        store.waitForRecordFiles()
        read.withLock { $0 = 0 }
        #expect(try catalog.refresh() == .records(["a": "Note", "b": "Task"]))
        #expect(read.withLock { $0 } == 0, "own commits are not read back")
        #expect(try catalog.record(named: "a")?["n"] == .int64(2) && catalog.record(named: "b") == nil)

        // Another opening's save between two of this one's: this one's next commit takes it
        // in (to check its save against it), and the refresh then takes all three, in log
        // order, without reading the log.
        try db.save(record("c", ["n": .int64(1)]))
        try t.db(device: "other").save(try db.record(for: id("c")).replacingFields(["n": .int64(2)]))
        try db.save(try db.record(for: id("c")).replacingFields(["n": .int64(3)]))
        read.withLock { $0 = 0 }
        #expect(try catalog.refresh() == .records(["c": "Note"]))
        #expect(read.withLock { $0 } == 0, "entries the storage read are not read again")
        #expect(try catalog.record(named: "c")?["n"] == .int64(3))

        // Another opening's save alone: its entry is read once, by the refresh and the record
        // read after it together (the catalog's and the storage's reads were one each).
        func logSize() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: storage.logPath)[.size] as? Int) }
        let before = try logSize()
        try t.db(device: "other").save(record("d", ["n": .int64(4)]))
        let othersEntry = try logSize() - before
        read.withLock { $0 = 0 }
        #expect(try catalog.refresh() == .records(["d": "Note"]))
        #expect(try catalog.record(named: "d")?["n"] == .int64(4))
        #expect(read.withLock { $0 } == othersEntry, "another's entry is read once (\(othersEntry) bytes)")

        // Another opening's save, taken in by a refresh, then a commit of this opening: the
        // commit finds the entry taken in already, also when the catalog holds the records.
        let beforeSecond = try logSize()
        try t.db(device: "other").save(record("e", ["n": .int64(5)]))
        let othersSecond = try logSize() - beforeSecond
        // Its files written first: a commit writes the files of others' entries the files lack,
        // reading them from the log.
        t.store.waitForRecordFiles()
        read.withLock { $0 = 0 }
        #expect(try catalog.refresh() == .records(["e": "Note"]))
        try db.save(record("f"))
        #expect(try catalog.refresh() == .records(["f": "Note"]))
        if reading == .inMemory {
            // Counted over the commit too: held in memory, no index is brought up by reading the log.
            #expect(read.withLock { $0 } == othersSecond, "another's entry is read once (\(othersSecond) bytes) by a refresh and a commit")
        }
        #expect(try catalog.record(named: "e")?["n"] == .int64(5))

        // Past the feed's bound, the log is read: nothing is lost.
        for i in 0..<(LogEntryFeed.maximumEntries + 5) { try db.save(record("many-\(i)")) }
        guard case .records(let changed) = try catalog.refresh() else { Issue.record("no change"); return }
        #expect(changed.count == LogEntryFeed.maximumEntries + 5)
        #expect(try catalog.names(ofType: "Note").count == 5 + LogEntryFeed.maximumEntries + 5)
    }

    /// An opening that only follows another's saves (the mount while an app writes) keeps
    /// none of the versions the other's applier has written to the files, so its memory does
    /// not grow with every record the other writes. What it answers stays the newest version.
    @Test func aFollowerKeepsNoVersionTheFilesHold() throws {
        let t = try TempStore()
        let db = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        try db.save(record("a", ["n": .int64(1)]))
        let catalog = db.catalog(ZoneID.defaultZoneName)
        _ = try catalog.refresh()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let other = try t.db(device: "other")
        for round in 0..<3 {
            _ = try other.modify(saving: (0..<400).map { record("r\(round)-\($0)", ["n": .int64(Int64(round))]) })
            t.store.waitForRecordFiles()
            guard case .records(let changed) = try catalog.refresh() else { Issue.record("no change in round \(round)"); return }
            #expect(changed.count == 400)
            let kept = storage.state.withLock { state in state.unapplied.count }
            #expect(kept == 0, "round \(round): \(kept) versions kept that the files hold")
        }
        _ = try other.modify(saving: [try other.record(for: id("r0-7")).replacingFields(["n": .int64(9)])])
        t.store.waitForRecordFiles()
        _ = try catalog.refresh()
        #expect(try catalog.record(named: "r0-7")?["n"] == .int64(9))
        #expect(try db.record(for: id("r2-399"))["n"] == .int64(2))
        #expect(try catalog.names(ofType: "Note").count == 1 + 3 * 400)
    }

    /// The entries kept for the catalogs of a store object's zones have one bound for all of
    /// them, not only 4 MiB a zone, so a server whose clients write to many zones and read few
    /// holds at most that. A catalog whose entries were dropped reads them from the log, and
    /// answers as before.
    /// Six zones, each with a catalog that has looked once, in an opening that keeps 1 MiB of
    /// log entries for its catalogs.
    static func sixZonesFollowed() throws -> (t: TempStore, store: Store, db: Database, zones: [String]) {
        let tuning = ZoneTuning.with { $0.keptEntryBytes = 1 << 20 }
        let t = try TempStore(tuning: tuning)
        let store = try t.reopen(tuning: tuning, reading: .indexed)
        let db = try store.container().database(.private, caller: Caller(userName: "alice"))
        let zones = (0..<6).map { "Zone\($0)" }
        for zone in zones {
            try db.createZone(zone)
            _ = try db.catalog(zone).refresh()
        }
        return (t, store, db, zones)
    }

    @Test func keptEntriesHaveOneBoundForAllZones() throws {
        let (t, store, db, zones) = try Self.sixZonesFollowed()
        defer { withExtendedLifetime(t) {} }
        // Each zone gets 3 batches of 100 records (about 0.11 MiB a batch as the feed counts
        // them): 2 MiB in all, twice the bound, each zone far under its own bound of 4 MiB.
        for round in 0..<3 {
            for zone in zones {
                _ = try db.modify(saving: (0..<100).map { record("r\(round)-\($0)", zone: zone, ["n": .int64(Int64(round))]) })
                #expect(store.feedBudget.inUse <= 1 << 20, "\(store.feedBudget.inUse) bytes kept after \(zone), round \(round)")
            }
        }
        #expect(store.feedBudget.inUse > 0, "entries are kept within the bound")
        for zone in zones {
            guard case .records(let changed) = try db.catalog(zone).refresh() else { Issue.record("no change in \(zone)"); continue }
            #expect(changed.count == 300, "\(zone)")
            #expect(try db.catalog(zone).record(named: "r2-99")?["n"] == .int64(2))
        }
        #expect(store.feedBudget.inUse == 0, "taken entries give their bytes back")
    }

    /// Once zones written and not looked at hold the shared bound, a zone whose catalog looks
    /// still keeps its entries for it: the feeds whose catalogs took nothing since they were
    /// last asked drop theirs. Without the asks, the idle zones would keep the bound and every
    /// look of the busy catalog would read the log.
    @Test func aZoneWhoseCatalogLooksGetsTheRoomOfIdleOnes() throws {
        let (t, store, db, zones) = try Self.sixZonesFollowed()
        defer { withExtendedLifetime(t) {} }
        // Small batches (about 11 KB as the feed counts them) to five zones whose catalogs do
        // not look, twice the bound in all: they end holding most of it, more than a zone's
        // batch of 300 records (about 340 KB) leaves room for.
        for round in 0..<40 {
            for zone in zones.prefix(5) {
                _ = try db.modify(saving: (0..<10).map { record("r\(round)-\($0)", zone: zone) })
            }
        }
        #expect(store.feedBudget.inUse > (1 << 20) - 300_000, "\(store.feedBudget.inUse)")
        let busy = zones.last!
        var kept: [Int] = []
        for round in 0..<4 {
            usleep(60_000)
            _ = try db.modify(saving: (0..<300).map { record("r\(round)-\($0)", zone: busy, ["n": .int64(Int64(round))]) })
            kept.append(db.zoneFolder(busy).entryFeed.keptBytes)
            guard case .records(let changed) = try db.catalog(busy).refresh() else { Issue.record("no change in round \(round)"); continue }
            #expect(changed.count == 300)
            #expect(try db.catalog(busy).record(named: "r\(round)-299")?["n"] == .int64(Int64(round)))
            #expect(store.feedBudget.inUse <= 1 << 20)
        }
        #expect(kept.dropFirst().allSatisfy { $0 > 0 }, "the busy zone's entries are kept once the idle ones were asked: \(kept)")
    }

    /// Two first looks at once (the mount's first listing and its watcher) load the zone
    /// once: one reports it reloaded, the other finds nothing new.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func firstLooksAtOnceLoadTheZoneOnce(reading: ZoneReading) throws {
        let t = try TempStore()
        let writer = try t.db()
        for part in 0..<5 {
            _ = try writer.modify(saving: (0..<400).map { record("r\(part)-\($0)", ["n": .int64(Int64($0))]) })
        }
        t.store.waitForRecordFiles()
        for round in 0..<5 {
            let catalog = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
            let changes = Mutex<[ZoneCatalogChange]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    let c = (try? catalog.refresh()) ?? .zoneGone
                    changes.withLock { $0.append(c) }
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let seen = changes.withLock { $0 }
            #expect(seen.filter { $0 == .reloaded }.count == 1 && seen.contains(.none), "round \(round): \(seen)")
            #expect(try catalog.allRecords().count == 2_000)
        }
    }

    /// A type's records come in name order (the mount lists them so), and stay so as records
    /// come and go after the first listing.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func recordsOfATypeComeInNameOrderAcrossChanges(reading: ZoneReading) throws {
        let t = try TempStore()
        let writer = try t.db()
        _ = try writer.modify(saving: ["m", "c", "x", "a"].map { record($0, ["n": .int64(1)]) } + [record("b", type: "Task")])
        let catalog = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
        try catalog.refresh()
        #expect(try catalog.names(ofType: "Note") == ["a", "c", "m", "x"])
        _ = try writer.modify(saving: [record("d"), record("z")], deleting: [id("c")])
        try catalog.refresh()
        #expect(try catalog.names(ofType: "Note") == ["a", "d", "m", "x", "z"])
        #expect(try catalog.names(ofType: "Task") == ["b"])
        #expect(try catalog.recordTypes() == ["Note", "Task"])
    }

    /// Loading a zone reads the record files and then only the log after the apply marker
    /// (replaying the whole log parsed every record in it again). Built by hand:
    /// the files lack the last two entries (their files removed, the marker moved back), and
    /// the first line of the log is damaged, so a load that read the log from its start would
    /// stop there and miss them; later saves are still followed from where the load ended.
    @Test func aLoadReadsOnlyTheLogTheFilesLack() throws {
        let t = try TempStore()
        let writer = try t.db()
        for i in 1...5 { try writer.save(record("a\(i)", ["i": .int64(Int64(i))])) }
        t.store.waitForRecordFiles()
        let zone = writer.zoneDirectory(ZoneID.defaultZoneName)
        let logPath = StoreLayout.logFile(zone)
        var log = try #require(FileManager.default.contents(atPath: logPath)).map { $0 }
        let lineEnds = log.indices.filter { log[$0] == 0x0A }.map { Int64($0 + 1) }
        #expect(lineEnds.count == 5)
        for name in ["a4", "a5"] { try FileManager.default.removeItem(atPath: StoreLayout.recordFile(zone, name: name)) }
        let lock = try #require(FileHandle(forWritingAtPath: StoreLayout.lockFile(zone)))
        try lock.seek(toOffset: UInt64(ApplyMarker.offset))
        lock.write(Data(ApplyMarker(bootID: CommitMarker.currentBootID, applied: 3, end: lineEnds[2]).bytes()))
        try lock.close()
        log[Int(lineEnds[0]) / 2] ^= 0x01 // inside entry 1: its CRC no longer matches
        try Data(log).write(to: URL(fileURLWithPath: logPath))

        let catalog = try t.reopen().container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
        #expect(try catalog.refresh() == .reloaded)
        #expect(try catalog.allRecords().map(\.recordID.recordName).sorted() == ["a1", "a2", "a3", "a4", "a5"])
        #expect(try catalog.record(named: "a5")?["i"] == .int64(5))
        #expect(catalog.sequence == 5)
        try writer.save(record("a6"))
        #expect(try catalog.refresh() == .records(["a6": "Note"]))
        #expect(try catalog.allRecords().count == 6)
    }

    /// A load after the log was compacted past what the catalog had seen, with every entry
    /// applied (so none is replayed): the catalog follows the new log from its end, not from
    /// where it had been in the old, longer one; saves that grow the new log past that old
    /// place are all seen.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func aLoadAfterCompactionFollowsTheNewLogFromItsEnd(reading: ZoneReading) throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 8192 })
        let writer = try t.db()
        let catalog = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
        let logPath = StoreLayout.logFile(writer.zoneDirectory(ZoneID.defaultZoneName))
        func logSize() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) }
        var saved = 0
        while try logSize() < 7_000 {
            try savePadded(writer, count: 1, prefix: "x\(saved)-")
            saved += 1
        }
        _ = try catalog.refresh()
        let seenSize = try logSize()
        try savePadded(writer, count: 40, prefix: "y")
        saved += 40
        t.store.waitForRecordFiles()
        #expect(try logSize() < seenSize, "the test needs the log compacted below what the catalog saw")
        #expect(try catalog.refresh() == .reloaded)
        var i = 0
        while try logSize() <= seenSize + 600 {
            try writer.save(record("z\(i)"))
            i += 1
        }
        _ = try catalog.refresh()
        #expect(try catalog.allRecords().count == saved + i)
        #expect(try catalog.record(named: "z\(i - 1)") != nil)
    }

    /// After another opening compacts the log, a catalog finds the entries after what it saw
    /// by bisecting the new log, and reads those, not the whole new log.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func aCatalogFindsItsPlaceInACompactedLog(reading: ZoneReading) throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 256 << 10 })
        let writer = try t.db()
        let reader = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice"))
        let catalog = reader.catalog(ZoneID.defaultZoneName)
        let logPath = StoreLayout.logFile(writer.zoneDirectory(ZoneID.defaultZoneName))
        func logSize() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) }
        _ = try catalog.refresh()
        var saved = 0
        while true {
            let before = try logSize()
            try writer.save(record("r\(saved)", ["pad": .string(String(repeating: "p", count: 500))]))
            saved += 1
            if try logSize() < before { break }
            _ = try catalog.refresh()
        }
        for j in 0..<3 { try writer.save(record("after\(j)")) }
        let storage = reader.zoneFolder(ZoneID.defaultZoneName)
        let read = Mutex(0)
        storage.observers.logRead = { n in read.withLock { $0 += n } }
        let change = try catalog.refresh()
        storage.observers.logRead = nil
        #expect(change == .records(["r\(saved - 1)": "Note", "after0": "Note", "after1": "Note", "after2": "Note"]))
        let size = try logSize()
        #expect(read.withLock { $0 } < size / 4, "read \(read.withLock { $0 }) bytes of a log of \(size)")
        #expect(try catalog.allRecords().count == saved + 3)
        #expect(try catalog.record(named: "after2") != nil)
    }

    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func staysRightAcrossLogCompaction(reading: ZoneReading) throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 8192 })
        let writer = try t.db()
        let catalog = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
        _ = try catalog.refresh()
        for i in 0..<200 {
            try writer.save(record("r\(i % 20)", ["i": .int64(Int64(i))]), policy: .allKeys)
            if i % 37 == 0 { _ = try catalog.refresh() }
        }
        _ = try catalog.refresh()
        let truth = try writer.allRecords()
        #expect(try catalog.allRecords().count == truth.count)
        for r in truth { #expect(try catalog.record(named: r.recordID.recordName) == r) }
    }

    /// An indexed catalog whose index cannot be used (here a folder where the index file
    /// goes) loads the records instead, and the load takes in saves no refresh reported: the
    /// next refresh says the zone was reloaded, so a reader drops what it kept.
    @Test func aLoadInPlaceOfTheIndexIsReportedAtTheNextRefresh() throws {
        let t = try TempStore()
        let writer = try t.db()
        try writer.save(record("a"))
        let zone = writer.zoneDirectory(ZoneID.defaultZoneName)
        try FileManager.default.createDirectory(atPath: StoreLayout.indexFile(zone) + "/blocked", withIntermediateDirectories: true)
        let catalog = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice")).catalog(ZoneID.defaultZoneName)
        #expect(try catalog.refresh() == .reloaded)
        #expect(!catalog.holdsRecords)
        try writer.save(record("b", type: "Task"))
        #expect(try catalog.recordTypes() == ["Note", "Task"], "answered from the records, loaded")
        #expect(catalog.holdsRecords)
        let told = LockedBox<[ZoneCatalogChange]>([])
        catalog.listen(as: 1) { change in told.mutate { $0.append(change) } }
        #expect(try catalog.refresh() == .reloaded, "the save the load took in is reported")
        #expect(told.value == [.reloaded])
        #expect(try catalog.refresh() == .none)
    }

    @Test func aPublicRecordChangesOnlyByItsCreator() throws {
        let t = try TempStore()
        let alice = try t.db(.public, user: "alice")
        let bob = try t.db(.public, user: "bob")
        let saved = try alice.save(record("mine", ["v": .int64(1)]))
        #expect { try bob.save(saved.replacingFields(["v": .int64(2)])) } throws: { ($0 as? CKError)?.code == .permissionFailure }
        #expect { try bob.delete(id("mine")) } throws: { ($0 as? CKError)?.code == .permissionFailure }
        #expect(try alice.save(saved.replacingFields(["v": .int64(3)]))["v"] == .int64(3))
        try alice.delete(id("mine"))
    }
}
