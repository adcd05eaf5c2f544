import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The zone's index file (``ZoneIndexFile``) is derived data: whatever happens to it (deleted,
/// truncated, overwritten with garbage, an older copy restored, a copy from another history,
/// left behind by a compacted log), a store that reads zones from it answers every query and
/// first change fetch as a brute-force scan of the records does.
@Suite struct ZoneIndexFileTests {
    typealias G = PropertyListCodingTests.Generator

    /// Queries covering each kind of condition the index tests, and one it does not.
    static let queries: [RecordQuery] = [
        RecordQuery(recordType: "Thing"),
        RecordQuery(recordType: "Thing", predicate: .compare("n", .greater, .int(0)), sortDescriptors: [QuerySortDescriptor(key: "score", ascending: false)]),
        RecordQuery(recordType: "Thing", predicate: .and([.compare("owner", .equal, .reference("p1")), .compare("n", .lessOrEqual, .int(20))]),
                    sortDescriptors: [QuerySortDescriptor(key: "title"), QuerySortDescriptor(key: "n", ascending: false)]),
        RecordQuery(recordType: "Thing", predicate: .beginsWith("title", "caf"), sortDescriptors: [QuerySortDescriptor(key: "when")]),
        RecordQuery(recordType: "Thing", predicate: .contains("tags", .string("b")), sortDescriptors: [QuerySortDescriptor(key: "recordID", ascending: false)]),
        RecordQuery(recordType: "Thing", predicate: .not(.compare("n", .less, .int(0))), sortDescriptors: [QuerySortDescriptor(key: "n")]),
    ]

    /// Every query, paged, from a store that reads the zone from its index, against the
    /// records as a fresh in-memory read of the zone holds them, filtered and sorted here.
    static func expectAnswersMatch(_ t: TempStore, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let truth = try t.reopen().container().database(.private, caller: Caller(userName: "alice")).allRecords()
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        for query in queries {
            let got = try pages(indexed, query, limit: 37, atMost: truth.count + 1)
            let sort = query.sortDescriptors
            let expected = truth.filter { $0.recordType == query.recordType && query.predicate.matches($0) }.sorted { a, b in
                RecordQuery.compare(sort.map { QueryPredicate.field($0.key, of: a) }, a.recordID.recordName,
                                    sort.map { QueryPredicate.field($0.key, of: b) }, b.recordID.recordName, sort) < 0
            }.map(\.recordID.recordName)
            #expect(got == expected, "\(when): \(query.predicate) sorted by \(sort.map(\.key))", sourceLocation: sourceLocation)
        }
        // A first change fetch, in pages: every record once, in name order.
        var names: [String] = []
        var token: ChangeToken?
        var more = true
        while more {
            let page = try indexed.changes(since: token, limit: 50)
            names += page.changed.map(\.recordID.recordName)
            token = page.token
            more = page.moreComing && page.token.resumeAfter != nil
        }
        #expect(names == truth.map(\.recordID.recordName).sorted(), "\(when): first change fetch", sourceLocation: sourceLocation)
        let storage = indexed.zoneFolder(ZoneID.defaultZoneName)
        #expect(storage.indexSlot.file != nil, "\(when): the index answered", sourceLocation: sourceLocation)
    }

    /// The names of `query`'s pages of `limit`, until the last page or at least `atMost` names.
    static func pages(_ db: Database, _ query: RecordQuery, limit: Int, atMost: Int) throws -> [String] {
        var got: [String] = []
        var cursor: QueryCursor?
        repeat {
            let page = try db.query(query, limit: limit, cursor: cursor)
            got += page.records.map(\.recordID.recordName)
            cursor = page.cursor
        } while cursor != nil && got.count < atMost
        return got
    }

    /// Saves, edits and deletes `count` random changes through another opening of the store.
    static func churn(_ t: TempStore, _ g: inout G, count: Int, round: Int) throws {
        let db = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        let all = try db.allRecords()
        var saves: [Record] = []
        var deletes: [RecordID] = []
        var touched: Set<String> = []
        for i in 0..<count {
            let pick = all.randomElement(using: &g)!
            guard !touched.contains(pick.recordID.recordName) else { continue }
            switch Int.random(in: 0..<3, using: &g) {
            case 0:
                var r = pick
                r["n"] = .int64(Int64.random(in: -50...50, using: &g))
                r["title"] = Bool.random(using: &g) ? nil : .string(RecordQueryTests.words.randomElement(using: &g)!)
                saves.append(r)
                touched.insert(pick.recordID.recordName)
            case 1:
                deletes.append(pick.recordID)
                touched.insert(pick.recordID.recordName)
            default:
                saves.append(Record(recordType: "Thing", recordID: RecordID(recordName: "new\(round)-\(i)"),
                                    fields: ["n": .int64(Int64.random(in: -50...50, using: &g)), "owner": .reference(Reference(recordName: "p1"))]))
            }
        }
        if let e = try db.modify(saving: saves, deleting: deletes, options: ModifyOptions(savePolicy: .changedKeys)).error { throw e }
        db.store.waitForRecordFiles()
    }

    func makeStore(_ g: inout G, tuning: ZoneTuning? = nil) throws -> (TempStore, String) {
        let t = try TempStore(tuning: tuning)
        let db = try t.db()
        let records = RecordQueryTests.randomRecords(500, &g)
        for chunk in stride(from: 0, to: records.count, by: 100) {
            if let e = try db.modify(saving: Array(records[chunk..<min(chunk + 100, records.count)])).error { throw e }
        }
        db.store.waitForRecordFiles()
        return (t, db.zoneFolder(ZoneID.defaultZoneName).indexPath)
    }

    static func copyIndex(_ path: String, to dest: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try? FileManager.default.removeItem(atPath: dest + suffix)
            try FileManager.default.copyItem(atPath: path + suffix, toPath: dest + suffix)
        }
    }

    static func removeIndex(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test func theIndexFollowsWritesFromEveryOpening() throws {
        var g = G(state: 11)
        let (t, path) = try makeStore(&g)
        try Self.expectAnswersMatch(t, "made from the records")
        #expect(FileManager.default.fileExists(atPath: path))
        for round in 0..<4 {
            // The writers' appliers keep the index; nothing is rebuilt.
            try Self.churn(t, &g, count: [3, 40, 150, 1][round], round: round)
            let state = try #require(try ZoneIndexFile.open(path, create: false)?.state())
            let marker = try #require(try t.reopen().container().database(.private, caller: Caller(userName: "alice")).zoneFolder(ZoneID.defaultZoneName).peekMarker())
            #expect(state.applied == marker.seq, "round \(round): the writer brought the index to its last entry")
            try Self.expectAnswersMatch(t, "after churn \(round)")
        }
    }

    @Test func aDeletedTruncatedOrGarbageIndexIsMadeAgain() throws {
        var g = G(state: 12)
        let (t, path) = try makeStore(&g)
        try Self.expectAnswersMatch(t, "first")
        Self.removeIndex(path)
        try Self.churn(t, &g, count: 30, round: 1)
        try Self.expectAnswersMatch(t, "after the index was deleted")
        // Truncated to half: SQLite finds it damaged (or short), and it is made again.
        let st = try #require(try Syscall.stat(path).get())
        #expect(truncate(path, off_t(st.size / 2)) == 0)
        _ = try? FileManager.default.removeItem(atPath: path + "-wal")
        try Self.churn(t, &g, count: 30, round: 2)
        try Self.expectAnswersMatch(t, "after the index was truncated")
        // Not a database at all.
        Self.removeIndex(path)
        try Data(repeating: 0x42, count: 10_000).write(to: URL(fileURLWithPath: path))
        try Self.expectAnswersMatch(t, "after the index was overwritten")
    }

    /// Pages of the index overwritten past its state's (its first pages intact, so it opens and
    /// reads as up to date): a delete whose `deleteSelf` referrers the index names, and every
    /// question after, meet the damage where they read and answer as the records do.
    @Test func damageFoundWhereAReadGoesCostsARebuildNotAWrongAnswer() throws {
        var g = G(state: 17)
        let (t, path) = try makeStore(&g)
        let db = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let children = (0..<5).map { Record(recordType: "Thing", recordID: RecordID(recordName: "child\($0)"),
                                            fields: ["owner": .reference(Reference(recordName: "parent", action: .deleteSelf))]) }
        if let e = try db.modify(saving: [Record(recordType: "Thing", recordID: RecordID(recordName: "parent"))] + children).error { throw e }
        db.store.waitForRecordFiles()
        try Self.expectAnswersMatch(t, "first")

        for round in 0..<2 {
            // The WAL moved into the file first, so that the overwritten pages are the ones read.
            try SQLiteDatabase(path: path, create: false).execute("PRAGMA wal_checkpoint(TRUNCATE)")
            let size = try #require(try Syscall.stat(path).get()).size
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seek(toOffset: 6 * 4_096)
            try handle.write(contentsOf: Data(repeating: 0x42, count: Int(size) - 6 * 4_096))
            try handle.close()
            let writer = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
            if round == 0 {
                // The cascade's referrers come from the damaged index: the children go too.
                if let e = try writer.modify(saving: [], deleting: [RecordID(recordName: "parent")]).error { throw e }
                writer.store.waitForRecordFiles()
                let left = writer.fetch(children.map(\.recordID)).filter { (try? $0.1.get()) != nil }
                #expect(left.isEmpty, "children left after the parent's delete: \(left.map(\.0.recordName))")
            }
            try Self.expectAnswersMatch(t, "round \(round), with pages overwritten")
            let report = try t.reopen().check()
            #expect(report.isClean && report.repaired.isEmpty, "round \(round): \(report.repaired) \(report.damage)")
        }
    }

    @Test func anOlderCopyIsBroughtUpToDateAndOneFromAnotherHistoryIsMadeAgain() throws {
        var g = G(state: 13)
        let (t, path) = try makeStore(&g)
        try Self.expectAnswersMatch(t, "first")
        let backup = t.path + "/index-backup.sqlite"
        try Self.copyIndex(path, to: backup)
        try Self.churn(t, &g, count: 60, round: 1)
        try Self.copyIndex(backup, to: path)
        try Self.expectAnswersMatch(t, "with an index restored from before 60 changes")

        // The zone restored from a backup (log, records, markers) while the newer index stays:
        // the index names an entry this log does not have, so it is made again.
        let zone = (path as NSString).deletingLastPathComponent
        let zoneBackup = t.path + "/zone-backup"
        try FileManager.default.copyItem(atPath: zone, toPath: zoneBackup)
        try Self.churn(t, &g, count: 40, round: 2)
        try Self.copyIndex(path, to: backup)
        try FileManager.default.removeItem(atPath: zone)
        try FileManager.default.copyItem(atPath: zoneBackup, toPath: zone)
        try Self.copyIndex(backup, to: path)
        try Self.expectAnswersMatch(t, "with a newer index than the restored zone")
        // The restored zone goes on with changes of its own up to the same sequence numbers
        // the newer index was at: its entries differ in time, so the index is still not trusted.
        usleep(5_000)
        try Self.churn(t, &g, count: 40, round: 3)
        Self.removeIndex(path)
        try Self.copyIndex(backup, to: path)
        try Self.expectAnswersMatch(t, "with an index of another history at the same sequence number")
    }

    @Test func anIndexLeftBehindByACompactedLogIsMadeAgain() throws {
        var g = G(state: 14)
        let (t, path) = try makeStore(&g, tuning: .with { $0.compactLogBytes = 20_000; $0.checkpointEvery = 5 })
        try Self.expectAnswersMatch(t, "first")
        let backup = t.path + "/index-backup.sqlite"
        try Self.copyIndex(path, to: backup)
        for round in 1...6 { try Self.churn(t, &g, count: 20, round: round) }
        try Self.copyIndex(backup, to: path)
        try Self.expectAnswersMatch(t, "with an index older than the compacted log")
    }

    /// An index whose rows were changed behind its back (its state still says it is up to
    /// date) is found by `fsck`, which makes it again; a good one is left as it is.
    @Test func fsckFindsAnIndexThatDiffersFromTheRecordsAndMakesItAgain() throws {
        var g = G(state: 15)
        let (t, path) = try makeStore(&g)
        try Self.expectAnswersMatch(t, "first")
        let clean = t.store.check()
        #expect(clean.damage.isEmpty && !clean.repaired.contains { $0.contains("index") }, "\(clean.repaired) \(clean.damage)")
        let sql = try SQLiteDatabase(path: path, durability: .rebuildable, create: false)
        try sql.execute("DELETE FROM fields WHERE key = 'n' AND name IN (SELECT name FROM records ORDER BY name LIMIT 3)")
        try sql.execute("UPDATE records SET type = 'Other' WHERE name = (SELECT max(name) FROM records)")
        let report = try t.reopen().check()
        #expect(report.repaired.contains { $0.contains("index (index.sqlite) differed from the records in 4 records") }, "\(report.repaired)")
        #expect(report.damage.isEmpty, "\(report.damage)")
        #expect(try ZoneIndexFile.open(path, create: false)?.state() != nil, "the index made again says how far it holds the zone")
        try Self.expectAnswersMatch(t, "after fsck")
    }

    /// `fsck` compares the index with the records a chunk of names at a time (in SQLite's
    /// order of text, its UTF-8 bytes): a row changed on either side of a chunk's edge, a row
    /// without a record before the first name and after the last, each counts once.
    @Test func fsckComparesTheIndexChunkByChunkAndMissesNoEdge() throws {
        let t = try TempStore()
        let db = try t.db()
        let chunk = ZoneFolder.rebuildChunk
        // Two chunks and a half, saved in another order than their names' bytes ("Z" < "a" < "z").
        let names = (0..<(chunk * 5 / 2)).map { i in ["a", "Z", "z"][i % 3] + "-" + String(format: "%05d", i) }
        for start in stride(from: 0, to: names.count, by: 400) {
            let batch = names[start..<min(start + 400, names.count)].map { record($0, ["n": .int64(1)]) }
            if let e = try db.modify(saving: Array(batch)).error { throw e }
        }
        db.store.waitForRecordFiles()
        let path = db.zoneFolder(ZoneID.defaultZoneName).indexPath
        _ = try db.query(RecordQuery(recordType: "Note", predicate: .compare("n", .equal, .int(1))), limit: 1)
        let clean = t.store.check()
        #expect(!clean.repaired.contains { $0.contains("index") }, "\(clean.repaired)")

        let ordered = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let sql = try SQLiteDatabase(path: path, durability: .rebuildable, create: false)
        for name in [ordered[chunk - 1], ordered[chunk]] { try sql.execute("DELETE FROM fields WHERE name = '\(name)'") }
        for ghost in ["0-before-every-name", "~-after-every-name"] {
            try sql.execute("INSERT INTO records(name, type, seq) VALUES ('\(ghost)', 'Note', 1)")
        }
        let report = try t.reopen().check()
        #expect(report.repaired.contains { $0.contains("index (index.sqlite) differed from the records in 4 records") }, "\(report.repaired)")
        #expect(try t.reopen().check().repaired.allSatisfy { !$0.contains("index") }, "the index made again matches")
    }

    /// When most records match, every page of a query walks the sort key's order from the
    /// cursor instead of sorting every match; when few match, the matches are found first.
    /// Both give the brute-force order.
    @Test func aCommonMatchWalksTheSortOrderAndARareOneSortsTheMatches() throws {
        let t = try TempStore()
        let (records, indexed, plans) = try Self.rankedItems(t) { $0 % 200 == 0 ? "rare" : "common" }
        for (kind, plan) in [("common", ZoneFolder.QueryPlan.sortOrder), ("rare", .matchesSorted)] {
            for ascending in [true, false] {
                plans.reset()
                let query = RecordQuery(recordType: "Item", predicate: .compare("kind", .equal, .string(kind)),
                                        sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: ascending)])
                let got = try Self.pages(indexed, query, limit: 5, atMost: 20)
                let expected = records.filter { query.predicate.matches($0) }.sorted { a, b in
                    RecordQuery.compare([a["rank"]], a.recordID.recordName, [b["rank"]], b.recordID.recordName, query.sortDescriptors) < 0
                }.prefix(20).map { (r: Record) in r.recordID.recordName }
                #expect(got == Array(expected), "\(kind), ascending \(ascending)")
                #expect(plans.all == Array(repeating: plan, count: kind == "rare" ? 1 : 4), "\(kind), ascending \(ascending): \(plans.all)")
            }
        }
    }

    /// A walk in sort order takes from the index only the rows that may fill the page, and
    /// more when records fail a condition the index does not keep (`NOT`): the first rows of
    /// the walk fail it here, and every page still has the brute-force records, in order.
    @Test func aWalkInSortOrderTakesMoreRowsWhenRecordsFailAnUnindexedCondition() throws {
        let t = try TempStore()
        let (records, indexed, plans) = try Self.rankedItems(t) { _ in "common" }
        let query = RecordQuery(recordType: "Item", predicate: .and([.compare("kind", .equal, .string("common")), .not(.compare("rank", .less, .int(40)))]),
                                sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: true)])
        let got = try Self.pages(indexed, query, limit: 5, atMost: 20)
        let expected = records.filter { query.predicate.matches($0) }.sorted { a, b in
            RecordQuery.compare([a["rank"]], a.recordID.recordName, [b["rank"]], b.recordID.recordName, query.sortDescriptors) < 0
        }.prefix(20).map { (r: Record) in r.recordID.recordName }
        #expect(got == Array(expected))
        #expect(got.count == 20)
        #expect(plans.all == Array(repeating: .sortOrder, count: 4), "\(plans.all)")
    }

    /// A damaged record file in a zone without an index: a query fails naming the file and
    /// `ckfs fsck`, and the next queries fail the same at once instead of reading the zone up
    /// to the file again (tens of seconds at a million records, at every request of a mount);
    /// once the file is repaired the zone is read again and the query answers.
    @Test func aDamagedRecordFileIsReadPastOnceUntilItChanges() throws {
        let t = try TempStore()
        let db = try t.db()
        let records = (0..<50).map { Record(recordType: "Item", recordID: RecordID(recordName: String(format: "r%02d", $0)), fields: ["n": .int64(Int64($0))]) }
        if let e = try db.modify(saving: records).error { throw e }
        db.store.waitForRecordFiles()
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let storage = indexed.zoneFolder(ZoneID.defaultZoneName)
        storage.removeIndexFiles()
        let path = StoreLayout.recordFile(storage.directory, name: "r17")
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data("{\"broken".utf8).write(to: URL(fileURLWithPath: path))
        let reads = LockedPlans()
        storage.observers.zoneRead = { reads.append(.sortOrder) }
        let query = RecordQuery(recordType: "Item", predicate: .all, sortDescriptors: [QuerySortDescriptor(key: "n", ascending: true)])
        for _ in 0..<3 {
            do {
                _ = try Self.pages(indexed, query, limit: 5, atMost: 50)
                Issue.record("a query read past a damaged record file")
            } catch let error as CKError {
                #expect(error.message.contains(path) && error.message.contains("ckfs fsck"), "\(error.message)")
            }
        }
        #expect(reads.all.count == 1, "the zone was read \(reads.all.count) times")
        try good.write(to: URL(fileURLWithPath: path))
        #expect(try Self.pages(indexed, query, limit: 5, atMost: 50) == records.map(\.recordID.recordName))
        #expect(reads.all.count == 2)
    }

    /// 600 `Item` records with a `kind` (from their number) and a `rank` in a shuffled order,
    /// saved in two batches; the store opened again to read from the index, and the plans its
    /// queries take.
    static func rankedItems(_ t: TempStore, kind: (Int) -> String) throws -> ([Record], Database, LockedPlans) {
        let db = try t.db()
        let records = (0..<600).map { i in
            Record(recordType: "Item", recordID: RecordID(recordName: String(format: "i%03d", i)),
                   fields: ["kind": .string(kind(i)), "rank": .int64(Int64(i * 7919 % 600))])
        }
        for half in [records[..<300], records[300...]] {
            if let e = try db.modify(saving: Array(half)).error { throw e }
        }
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let plans = LockedPlans()
        let storage = indexed.zoneFolder(ZoneID.defaultZoneName)
        storage.observers.queryPlan = { plans.append($0) }
        return (records, indexed, plans)
    }

    /// Plans seen. `@unchecked Sendable`: `plans` is only touched under `lock`.
    final class LockedPlans: @unchecked Sendable {
        private let lock = NSLock()
        private var plans: [ZoneFolder.QueryPlan] = []
        func append(_ p: ZoneFolder.QueryPlan) { lock.withLock { plans.append(p) } }
        func reset() { lock.withLock { plans = [] } }
        var all: [ZoneFolder.QueryPlan] { lock.withLock { plans } }
    }

    /// Values the index keeps differently from Swift unless it takes care: a NUL inside a
    /// string, integers past 2^53 compared with doubles. Both paths give the same answers, and
    /// fsck finds nothing to repair.
    @Test func stringsWithNULAndLargeIntegersAnswerAsInMemory() throws {
        let t = try TempStore()
        let db = try t.db()
        let big: Int64 = 9_007_199_254_740_993 // 2^53 + 1: not a double
        let records = [
            record("a", type: "V", ["s": .string("a"), "n": .int64(big)]),
            record("b", type: "V", ["s": .string("a\u{0}b"), "n": .int64(big - 1)]),
            record("c", type: "V", ["s": .string("a\u{0}c"), "n": .int64(3)]),
        ]
        if let e = try db.modify(saving: records).error { throw e }
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let memory = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        let queries = [
            RecordQuery(recordType: "V", predicate: .compare("s", .greater, .string("a")), sortDescriptors: [QuerySortDescriptor(key: "s", ascending: false)]),
            RecordQuery(recordType: "V", predicate: .compare("s", .equal, .string("a\u{0}c"))),
            RecordQuery(recordType: "V", predicate: .compare("n", .equal, .double(9_007_199_254_740_992))),
            RecordQuery(recordType: "V", predicate: .compare("n", .lessOrEqual, .double(9_007_199_254_740_992)), sortDescriptors: [QuerySortDescriptor(key: "n")]),
        ]
        for query in queries {
            let want = try Self.pages(memory, query, limit: 2, atMost: 10)
            let got = try Self.pages(indexed, query, limit: 2, atMost: 10)
            #expect(got == want, "\(query.predicate)")
        }
        #expect(try Self.pages(memory, queries[0], limit: 2, atMost: 10) == ["c", "b"])
        let report = try t.reopen().check()
        #expect(!report.repaired.contains { $0.contains("index") } && report.damage.isEmpty, "\(report.repaired) \(report.damage)")
    }
}
