import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// What a query answered from the zone's index costs as the zone grows: a walk in sort order
/// stops after a bounded number of rows, and a value that matches many records, but too few
/// for that walk to find them, gets a pair index (``ZoneIndexFile/Pair``) whose rows are only
/// its matches. Every answer is the brute-force one, before and after the pairs' rows are
/// changed, left behind or lost.
@Suite struct IndexedQueryPlanTests {
    /// `count` `Item` records with a `kind` (from their number), a `rank` (in a shuffled order
    /// unless given) and a `tag`, saved in batches; the store opened again (with `tuning`) to read from the index, the
    /// plans its queries take and the work of their walks.
    static func items(_ t: TempStore, count: Int, tuning: ZoneTuning? = nil, rank: ((Int) -> Int64)? = nil,
                      kind: (Int) -> String) throws -> ([Record], Database, ZoneIndexFileTests.LockedPlans, Work) {
        let db = try t.db()
        let records = (0..<count).map { i in
            Record(recordType: "Item", recordID: RecordID(recordName: String(format: "i%05d", i)),
                   fields: ["kind": .string(kind(i)), "rank": .int64(rank?(i) ?? Int64(i * 7_919 % count)),
                            "tag": .string(i % 1_000 == 7 ? "seven" : "t\(i * 31 % 17)")])
        }
        for start in stride(from: 0, to: records.count, by: 400) {
            if let e = try db.modify(saving: Array(records[start..<min(start + 400, records.count)])).error { throw e }
        }
        db.store.waitForRecordFiles()
        let indexed = try t.reopen(tuning: tuning, reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        let plans = ZoneIndexFileTests.LockedPlans()
        let work = Work()
        let storage = indexed.zoneFolder(ZoneID.defaultZoneName)
        storage.observers.queryPlan = { plans.append($0) }
        storage.observers.walkWork = { work.add($0) }
        return (records, indexed, plans, work)
    }

    /// The names `query` should give from `records`, in order.
    static func bruteForce(_ records: [Record], _ query: RecordQuery) -> [String] {
        records.filter { $0.recordType == query.recordType && query.predicate.matches($0) }.sorted { a, b in
            RecordQuery.compare(query.sortDescriptors.map { QueryPredicate.field($0.key, of: a) }, a.recordID.recordName,
                                query.sortDescriptors.map { QueryPredicate.field($0.key, of: b) }, b.recordID.recordName, query.sortDescriptors) < 0
        }.map(\.recordID.recordName)
    }

    static func query(kind: String, ascending: Bool) -> RecordQuery {
        RecordQuery(recordType: "Item", predicate: .compare("kind", .equal, .string(kind)),
                    sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: ascending)])
    }

    /// A value six records have (one more than a page), sorted by another key: the walk in sort
    /// order gives up after a bounded number of rows whatever the zone's size, the count of the
    /// value's matches (too few for a pair) costs what they are, and the matches are sorted. An
    /// unbounded walk goes on through every row of the zone in SQL, looking for matches that
    /// are not there; a count that SQLite plans from the record type's side probes every record
    /// of the type.
    @Test func aWalkInSortOrderStopsAfterABoundedNumberOfRows() throws {
        var work: [Int: Int] = [:]
        for count in [1_000, 4_000] {
            let t = try TempStore()
            let (records, indexed, plans, walked) = try Self.items(t, count: count) { $0 % (count / 6) == 10 ? "rare" : "common" }
            for ascending in [true, false] {
                let query = Self.query(kind: "rare", ascending: ascending)
                #expect(try ZoneIndexFileTests.pages(indexed, query, limit: 5, atMost: 10) == Self.bruteForce(records, query))
            }
            #expect(plans.all == Array(repeating: .matchesSorted, count: 4), "\(plans.all)")
            work[count] = walked.total
        }
        let (small, large) = (work[1_000]!, work[4_000]!)
        #expect(small > 0)
        #expect(Double(large) < 1.5 * Double(small), "the walks took \(small) steps at 1,000 records and \(large) at 4,000")
    }

    /// A value that no more records have than a page holds, or that none has: the count of its
    /// matches, up to one more than the page, is all the planning; its matches are sorted
    /// without first walking the sort key's order, which would read its whole bound of rows
    /// (64 a result) looking for them.
    @Test func aValueFewRecordsHaveIsSortedWithoutAWalk() throws {
        let t = try TempStore()
        let (records, indexed, plans, walked) = try Self.items(t, count: 2_000) { $0 == 10 || $0 == 1_990 ? "rare" : "common" }
        let limit = 5
        for kind in ["rare", "none"] {
            for ascending in [true, false] {
                plans.reset()
                let before = walked.total
                let query = Self.query(kind: kind, ascending: ascending)
                #expect(try ZoneIndexFileTests.pages(indexed, query, limit: limit, atMost: 10) == Self.bruteForce(records, query))
                #expect(plans.all == [.matchesSorted], "\(kind), ascending \(ascending): \(plans.all)")
                let work = walked.total - before
                #expect(work > 0 && work < ZoneFolder.sortWalkRows * (limit + 1), "\(kind), ascending \(ascending): \(work) steps")
            }
        }
        // More matches than the page holds (7): the walk in sort order is tried first, as before.
        let more = try TempStore()
        let (moreRecords, moreIndexed, morePlans, moreWalked) = try Self.items(more, count: 2_000) { $0 % 333 == 1 ? "seven" : "common" }
        let query = Self.query(kind: "seven", ascending: true)
        #expect(try ZoneIndexFileTests.pages(moreIndexed, query, limit: limit, atMost: 10) == Self.bruteForce(moreRecords, query))
        #expect(morePlans.all == [.matchesSorted, .matchesSorted], "\(morePlans.all)")
        #expect(moreWalked.total >= ZoneFolder.sortWalkRows * (limit + 1), "\(moreWalked.total) steps")
    }

    /// A query without conditions, sorted by a field (the newest posts first): the most
    /// common query there is. The sort key's order is walked and the first rows fill the page,
    /// where sorting every record of the type would take a temporary B-tree of the whole zone
    /// at every page. Records without the key, and of other types
    /// with it, are paged through in the right order to the end.
    @Test func aQueryWithoutConditionsWalksTheSortOrder() throws {
        let t = try TempStore()
        let (records, indexed, plans, _) = try Self.items(t, count: 2_000) { "k\($0 % 7)" }
        for ascending in [true, false] {
            let query = RecordQuery(recordType: "Item", predicate: .all, sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: ascending)])
            #expect(try ZoneIndexFileTests.pages(indexed, query, limit: 20, atMost: 100) == Array(Self.bruteForce(records, query).prefix(100)))
        }
        #expect(!plans.all.isEmpty && plans.all.allSatisfy { $0 == .sortOrder }, "\(plans.all)")

        // Records without the key sort last; another type's records with it are not walked.
        let mixed = try TempStore()
        let (some, db, mixedPlans, _) = try Self.items(mixed, count: 60) { "k\($0 % 3)" }
        let writer = try mixed.db()
        var lacking = Array(some.prefix(15))
        for i in lacking.indices { lacking[i] = lacking[i].replacingFields(["kind": lacking[i]["kind"]!]) }
        #expect(try writer.modify(saving: lacking, options: ModifyOptions(savePolicy: .allKeys)).error == nil)
        let others = (0..<30).map { Record(recordType: "Other", recordID: RecordID(recordName: "o\($0)"), fields: ["rank": .int64(Int64($0))]) }
        _ = try writer.modify(saving: others)
        writer.store.waitForRecordFiles()
        let all = try writer.allRecords()
        for ascending in [true, false] {
            let query = RecordQuery(recordType: "Item", predicate: .all, sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: ascending)])
            #expect(try ZoneIndexFileTests.pages(db, query, limit: 7, atMost: 1_000) == Self.bruteForce(all, query))
        }
        #expect(mixedPlans.all.contains(.sortOrder) && mixedPlans.all.contains(.matchesSorted), "\(mixedPlans.all)")
    }

    /// A value that one record in 150 has, sorted by rank: too rare for the walk in rank order
    /// to fill a page, common enough to make a pair index of (kind, rank), whose walk then
    /// gives each page. Another opening's changes keep the pair's rows, and so does bringing
    /// an older copy of the index up to date from the log; pairs left behind by an update that
    /// did not keep them are filled again, a lost index makes them again, and `fsck` finds rows
    /// changed behind the index's back.
    @Test func aPairIndexWalksOnlyTheMatchesAndFollowsEveryChange() throws {
        let tuning = ZoneTuning.with { $0.pairIndexFromMatches = 8 }
        let t = try TempStore(tuning: tuning)
        var (records, indexed, plans, _) = try Self.items(t, count: 3_000, tuning: tuning) { $0 % 150 == 0 ? "sparse" : "common" }
        let storage = indexed.zoneFolder(ZoneID.defaultZoneName)
        let pair = ZoneIndexFile.Pair(type: "Item", key: "kind", sort: "rank")

        func expectAnswers(_ when: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for ascending in [true, false] {
                plans.reset()
                let query = Self.query(kind: "sparse", ascending: ascending)
                let expected = Self.bruteForce(records, query)
                #expect(try ZoneIndexFileTests.pages(indexed, query, limit: 2, atMost: expected.count + 2) == expected,
                        "\(when), ascending \(ascending)", sourceLocation: sourceLocation)
                #expect(plans.all.first == .pairOrder && plans.all.filter { $0 == .pairOrder }.count >= expected.count / 2 - 1,
                        "\(when), ascending \(ascending): \(plans.all)", sourceLocation: sourceLocation)
            }
            // The pair's rows are what the records say, no more, no less.
            let sql = try SQLiteDatabase(path: storage.indexPath, durability: .rebuildable, create: false)
            var rows: Set<String> = []
            try sql.prepare("SELECT keyValue, value, name FROM pairs WHERE type = 'Item' AND key = 'kind' AND sort = 'rank'").forEachRow { row in
                rows.insert("\(row.text(0)) \(row.int(1)) \(row.text(2))")
                return true
            }
            let expected = Set(records.compactMap { r -> String? in
                guard case .string(let kind)? = r["kind"], case .int64(let rank)? = r["rank"] else { return nil }
                return "\(kind) \(rank) \(r.recordID.recordName)"
            })
            #expect(rows == expected, "\(when): the pair's rows", sourceLocation: sourceLocation)
        }

        try expectAnswers("first")
        #expect(try storage.currentIndex()!.read { (reader) throws(CKError) in try reader.keeps(pair) })
        let backup = t.path + "/index-backup.sqlite"
        try ZoneIndexFileTests.copyIndex(storage.indexPath, to: backup)

        // A value matching fewer records than the bound sorts its matches and makes no pair.
        let seven = RecordQuery(recordType: "Item", predicate: .compare("tag", .equal, .string("seven")),
                                sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: true)])
        #expect(try ZoneIndexFileTests.pages(indexed, seven, limit: 2, atMost: 10) == Self.bruteForce(records, seven))
        #expect(try !storage.currentIndex()!.read { (reader) throws(CKError) in
            try reader.keeps(ZoneIndexFile.Pair(type: "Item", key: "tag", sort: "rank"))
        })

        // A value that enough records have, but of another type, makes no pair: its walk would
        // find none of them. The Item record with it is found by sorting the matches.
        let elsewhere = (0..<20).map { Record(recordType: "Other", recordID: RecordID(recordName: "other-\($0)"),
                                              fields: ["tag": .string("rare"), "rank": .int64(Int64($0))]) }
        let tagged = records[5].replacingFields(["kind": records[5]["kind"]!, "rank": records[5]["rank"]!, "tag": .string("rare")])
        if let e = try t.db().modify(saving: elsewhere + [tagged], options: ModifyOptions(savePolicy: .allKeys)).error { throw e }
        let rare = RecordQuery(recordType: "Item", predicate: .compare("tag", .equal, .string("rare")),
                               sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: true)])
        #expect(try ZoneIndexFileTests.pages(indexed, rare, limit: 2, atMost: 10) == ["i00005"])
        #expect(try !storage.currentIndex()!.read { (reader) throws(CKError) in
            try reader.keeps(ZoneIndexFile.Pair(type: "Item", key: "tag", sort: "rank"))
        })
        records[5] = try indexed.record(for: records[5].recordID)

        // Another opening moves records in and out of the value, changes ranks, deletes, and
        // adds records with the value, one without a rank (it sorts last).
        let writer = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        let current = Dictionary(uniqueKeysWithValues: try writer.allRecords().map { ($0.recordID.recordName, $0) })
        records = (0..<3_000).map { current[String(format: "i%05d", $0)]! }
        var saves: [Record] = []
        var deletes: [RecordID] = []
        for i in stride(from: 0, to: 3_000, by: 150).prefix(12) {
            var r = records[i]
            switch (i / 150) % 3 {
            case 0: r["kind"] = .string("common")
            case 1: r["rank"] = .int64(Int64(5_000 + i))
            default: deletes.append(r.recordID); continue
            }
            saves.append(r)
        }
        for i in [1, 2, 3] {
            var r = records[i]
            r["kind"] = .string("sparse")
            saves.append(r)
        }
        saves.append(Record(recordType: "Item", recordID: RecordID(recordName: "new-ranked"), fields: ["kind": .string("sparse"), "rank": .int64(-1)]))
        saves.append(Record(recordType: "Item", recordID: RecordID(recordName: "new-unranked"), fields: ["kind": .string("sparse")]))
        if let e = try writer.modify(saving: saves, deleting: deletes).error { throw e }
        writer.store.waitForRecordFiles()
        records = try writer.allRecords()
        try expectAnswers("after another opening's changes")

        // An older copy of the index restored: brought up to date from the log, pairs too.
        try ZoneIndexFileTests.copyIndex(backup, to: storage.indexPath)
        try expectAnswers("with an index restored from before the changes")

        // An update that did not keep the pairs (an older ckfs): their rows are behind.
        let sql = try SQLiteDatabase(path: storage.indexPath, durability: .rebuildable, create: false)
        try sql.execute("UPDATE pairs_state SET applied = applied - 1")
        try sql.execute("DELETE FROM pairs WHERE name IN (SELECT name FROM pairs LIMIT 3)")
        try expectAnswers("with the pairs' rows behind the index")

        // The index lost: made again from the records, and the pair with it at the next query.
        storage.removeIndexFiles()
        try expectAnswers("after the index was lost")

        // Rows changed behind the index's back (its state still current): `fsck` finds them,
        // and the pair is made again at the next query.
        let damaged = try SQLiteDatabase(path: storage.indexPath, durability: .rebuildable, create: false)
        try damaged.execute("DELETE FROM pairs WHERE name IN (SELECT name FROM pairs LIMIT 2)")
        try damaged.execute("INSERT INTO pairs VALUES ('Item', 'kind', 'sparse', 'rank', 7, 'i00001')")
        let report = try t.reopen().check()
        #expect(report.repaired.contains { $0.contains("pair indexes (index.sqlite) differed from the records in 3 rows") }, "\(report.repaired)")
        #expect(report.damage.isEmpty, "\(report.damage)")
        try expectAnswers("after fsck")
        #expect(try t.reopen().check().repaired.isEmpty, "a second fsck finds nothing")
    }

    /// A zone keeps at most ``ZoneIndexFile/pairLimit`` pair indexes. A query shape past them
    /// takes the place of the pair used longest ago once that one has been idle for
    /// `pairIdleMilliseconds`, and sorts its matches while every pair is in use. Uses are noted in
    /// the index file, so an opening chooses by another's queries too; a `pair_keys` an older
    /// ckfs made (no `used` column) gets the column. Answers are the brute force's throughout,
    /// and `fsck` finds the pairs' rows right.
    @Test func aNewPairTakesThePlaceOfThePairUsedLongestAgo() throws {
        let limit = ZoneIndexFile.pairLimit
        let busy = ZoneTuning.with { $0.pairIndexFromMatches = 8 }
        let t = try TempStore(tuning: busy)
        // Field fN is "x" in 20 records of 3,000: rare for a walk in rank order, enough for a pair.
        let records = (0..<3_000).map { i in
            var fields: [String: FieldValue] = ["rank": .int64(Int64(i * 7_919 % 3_000))]
            for f in 0...(limit + 1) { fields["f\(f)"] = .string(i % 150 == f ? "x" : "y") }
            return Record(recordType: "Item", recordID: RecordID(recordName: String(format: "i%05d", i)), fields: fields)
        }
        let db = try t.db()
        for start in stride(from: 0, to: records.count, by: 400) {
            if let e = try db.modify(saving: Array(records[start..<min(start + 400, records.count)])).error { throw e }
        }
        db.store.waitForRecordFiles()
        func opening(_ tuning: ZoneTuning) throws -> (Database, ZoneIndexFileTests.LockedPlans) {
            let indexed = try t.reopen(tuning: tuning, reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
            let plans = ZoneIndexFileTests.LockedPlans()
            indexed.zoneFolder(ZoneID.defaultZoneName).observers.queryPlan = { plans.append($0) }
            return (indexed, plans)
        }
        func ask(_ db: Database, _ f: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let query = RecordQuery(recordType: "Item", predicate: .compare("f\(f)", .equal, .string("x")),
                                    sortDescriptors: [QuerySortDescriptor(key: "rank", ascending: true)])
            let expected = Self.bruteForce(records, query)
            #expect(expected.count == 20, "f\(f)", sourceLocation: sourceLocation)
            #expect(try ZoneIndexFileTests.pages(db, query, limit: 5, atMost: 30) == expected, "f\(f)", sourceLocation: sourceLocation)
            usleep(3_000)   // the next use is noted at a later millisecond
        }
        // The zone's index file, as another process reads it; made by the first indexed query.
        func index() throws -> SQLiteDatabase {
            try SQLiteDatabase(path: db.zoneFolder(ZoneID.defaultZoneName).indexPath, durability: .rebuildable, create: false)
        }
        func column(_ sql: String) throws -> [String] {
            var out: [String] = []
            try index().prepare(sql).forEachRow { row in
                out.append(row.text(0))
                return true
            }
            return out
        }
        func kept() throws -> Set<String> { Set(try column("SELECT key FROM pair_keys")) }

        // Every pair made and used within the idle time: a shape past them sorts its matches.
        let (first, firstPlans) = try opening(busy)
        for f in 0..<limit { try ask(first, f) }
        #expect(try kept() == Set((0..<limit).map { "f\($0)" }))
        firstPlans.reset()
        try ask(first, limit)
        #expect(!firstPlans.all.isEmpty && firstPlans.all.allSatisfy { $0 == .matchesSorted }, "\(firstPlans.all)")
        #expect(try kept() == Set((0..<limit).map { "f\($0)" }), "no pair dropped while all are in use")

        // Idle at once: f0 used again, so f1 is the one used longest ago and makes room.
        let (idle, idlePlans) = try opening(.with { $0.pairIndexFromMatches = 8; $0.pairIdleMilliseconds = 0 })
        try ask(idle, 0)
        idlePlans.reset()
        try ask(idle, limit)
        #expect(idlePlans.all.contains(.pairOrder), "\(idlePlans.all)")
        #expect(try kept() == Set((0...limit).map { "f\($0)" }).subtracting(["f1"]))
        #expect(try column("SELECT count(*) FROM pairs WHERE key = 'f1'") == ["0"], "the dropped pair's rows are gone")
        // f2 used: f3 makes room for f1 again.
        try ask(idle, 2)
        try ask(idle, 1)
        #expect(try kept() == Set((0...limit).map { "f\($0)" }).subtracting(["f3"]))

        // As an older ckfs left it: no `used` column. Its pairs count as never used.
        try index().execute("ALTER TABLE pair_keys DROP COLUMN used")
        try ask(idle, limit + 1)
        let afterOlder = try kept()
        #expect(afterOlder.count == limit && afterOlder.contains("f\(limit + 1)"), "\(afterOlder)")
        #expect(try column("SELECT name FROM pragma_table_info('pair_keys') WHERE name = 'used'") == ["used"])
        for f in 0...(limit + 1) { try ask(idle, f) }
        let report = try t.reopen().check()
        #expect(report.repaired.isEmpty && report.damage.isEmpty, "\(report.repaired) \(report.damage)")
    }

    /// A pair walked for values that many records share, with a second sort key and with the
    /// record name breaking ties: every page, from any cursor, is the brute-force page.
    @Test func aPairIndexOrdersTiesAsTheQueryDoes() throws {
        let tuning = ZoneTuning.with { $0.pairIndexFromMatches = 8 }
        let t = try TempStore(tuning: tuning)
        let (records, indexed, plans, _) = try Self.items(t, count: 3_000, tuning: tuning, rank: { Int64($0 / 150 % 3) }) {
            $0 % 300 < 2 ? "sparse" : "common"
        }
        let sorts: [[QuerySortDescriptor]] = [
            [QuerySortDescriptor(key: "rank", ascending: true)],
            [QuerySortDescriptor(key: "rank", ascending: false)],
            [QuerySortDescriptor(key: "rank", ascending: true), QuerySortDescriptor(key: "tag", ascending: false)],
            [QuerySortDescriptor(key: "rank", ascending: false), QuerySortDescriptor(key: "recordID", ascending: false)],
        ]
        for sort in sorts {
            plans.reset()
            let query = RecordQuery(recordType: "Item", predicate: .compare("kind", .equal, .string("sparse")), sortDescriptors: sort)
            let expected = Self.bruteForce(records, query)
            #expect(expected.count == 20)
            #expect(try ZoneIndexFileTests.pages(indexed, query, limit: 3, atMost: 50) == expected, "sorted by \(sort.map(\.key))")
            #expect(plans.all.filter { $0 == .pairOrder }.count >= 4, "sorted by \(sort.map(\.key)): \(plans.all)")
        }
    }

    /// Work of the walks seen. `@unchecked Sendable`: `total` is only touched under `lock`.
    final class Work: @unchecked Sendable {
        private let lock = NSLock()
        private var sum = 0
        func add(_ n: Int) { lock.withLock { sum += n } }
        var total: Int { lock.withLock { sum } }
    }
}
