import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Queries against the store: every comparator on the field types it applies to, and
/// random queries over 1,000 random records equal to a brute-force filter and sort written
/// here independently, across cursor pages. Each runs twice: reading the zone into memory,
/// and from its index file.
@Suite struct RecordQueryTests {
    typealias G = PropertyListCodingTests.Generator

    /// "café" twice: composed, and as "e" with a combining accent (equal to Swift, unequal bytes).
    static let words = ["old", "tower", "Lighthouse", "café", "CAFE", "sea", "ink", "cafe\u{301}s"]

    static func randomRecords(_ count: Int, _ g: inout G) -> [Record] {
        (0..<count).map { i in
            var fields: [String: FieldValue] = [:]
            if Int.random(in: 0..<10, using: &g) > 0 { fields["n"] = .int64(Int64.random(in: -50...50, using: &g)) }
            if Int.random(in: 0..<10, using: &g) > 0 { fields["score"] = .double(Double(Int.random(in: -400...400, using: &g)) / 8) }
            if Int.random(in: 0..<10, using: &g) > 0 {
                fields["title"] = .string((0..<Int.random(in: 1...3, using: &g)).map { _ in words.randomElement(using: &g)! }.joined(separator: " "))
            }
            if Int.random(in: 0..<10, using: &g) > 0 { fields["when"] = .timestamp(milliseconds: Int64.random(in: 0...100, using: &g) * 86_400_000) }
            if Int.random(in: 0..<10, using: &g) > 0 {
                fields["tags"] = .list(.string, (0..<Int.random(in: 1...3, using: &g)).map { _ in .string(["a", "b", "c", "d"].randomElement(using: &g)!) })
            }
            if Int.random(in: 0..<10, using: &g) > 0 { fields["owner"] = .reference(Reference(recordName: "p\(Int.random(in: 0..<5, using: &g))")) }
            if Int.random(in: 0..<10, using: &g) > 0 {
                fields["where"] = .location(Location(latitude: 59 + Double(Int.random(in: 0...100, using: &g)) / 100, longitude: 24 + Double(Int.random(in: 0...100, using: &g)) / 100))
            }
            return Record(recordType: "Thing", recordID: RecordID(recordName: String(format: "r%04d", i)), fields: fields)
        }
    }

    /// A random predicate with the brute-force test that means the same, written without the engine.
    static func randomPredicate(_ g: inout G, depth: Int = 0) -> (QueryPredicate, (Record) -> Bool) {
        func num(_ r: Record, _ k: String) -> Double? {
            switch r.fields[k] { case .int64(let i)?: Double(i); case .double(let d)?: d; default: nil }
        }
        func test(_ op: ComparisonOperator, _ a: Double, _ b: Double) -> Bool {
            switch op { case .equal: a == b; case .notEqual: a != b; case .less: a < b; case .lessOrEqual: a <= b; case .greater: a > b; case .greaterOrEqual: a >= b }
        }
        func test(_ op: ComparisonOperator, _ a: String, _ b: String) -> Bool {
            switch op { case .equal: a == b; case .notEqual: a != b; case .less: a < b; case .lessOrEqual: a <= b; case .greater: a > b; case .greaterOrEqual: a >= b }
        }
        let op = ComparisonOperator.allCases.randomElement(using: &g)!
        switch Int.random(in: 0..<(depth > 1 ? 11 : 13), using: &g) {
        case 0:
            let v = Int64.random(in: -50...50, using: &g)
            return (.compare("n", op, .int(v)), { r in num(r, "n").map { test(op, $0, Double(v)) } ?? false })
        case 1:
            let v = Double(Int.random(in: -400...400, using: &g)) / 8
            return (.compare("score", op, .double(v)), { r in num(r, "score").map { test(op, $0, v) } ?? false })
        case 2:
            let v = words.randomElement(using: &g)!
            return (.compare("title", op, .string(v)), { r in
                if case .string(let s)? = r.fields["title"] { test(op, s.precomposedStringWithCanonicalMapping, v.precomposedStringWithCanonicalMapping) } else { false }
            })
        case 3:
            let v = Int64.random(in: 0...100, using: &g) * 86_400_000
            return (.compare("when", op, .date(milliseconds: v)), { r in if case .timestamp(let t)? = r.fields["when"] { test(op, Double(t.millisecondsSince1970), Double(v)) } else { false } })
        case 4:
            let (lo, hi) = (Int64.random(in: -60...20, using: &g), Int64.random(in: -20...60, using: &g))
            return (.between("n", .int(lo), .int(hi)), { r in num(r, "n").map { $0 >= Double(lo) && $0 <= Double(hi) } ?? false })
        case 5:
            let set = (0..<3).map { _ in Int64.random(in: -50...50, using: &g) }
            return (.isIn("n", set.map { .int($0) }), { r in num(r, "n").map { v in set.contains { Double($0) == v } } ?? false })
        case 6:
            let p = ["o", "Li", "ca", "sea ", "x"].randomElement(using: &g)!
            return (.beginsWith("title", p), { r in if case .string(let s)? = r.fields["title"] { s.hasPrefix(p) } else { false } })
        case 7:
            let t = ["a", "b", "c", "d", "e"].randomElement(using: &g)!
            return (.contains("tags", .string(t)), { r in
                if case .list(_, let items)? = r.fields["tags"] { items.contains(.string(t)) } else { false }
            })
        case 8:
            let w = words.randomElement(using: &g)!
            let folded = w.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            return (.tokens(w), { r in
                r.fields.values.contains { v in
                    var strings: [String] = []
                    if case .string(let s) = v { strings = [s] }
                    if case .list(.string, let items) = v { strings = items.compactMap { if case .string(let s) = $0 { s } else { nil } } }
                    return strings.contains { $0.split(separator: " ").contains { $0.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) == folded } }
                }
            })
        case 9:
            let who = "p\(Int.random(in: 0..<5, using: &g))"
            return (.compare("owner", .equal, .reference(who)), { r in if case .reference(let ref)? = r.fields["owner"] { ref.recordName == who } else { false } })
        case 10:
            let centre = Location(latitude: 59.5, longitude: 24.5)
            let radius = Double(Int.random(in: 1...60, using: &g)) * 1000
            return (.distance("where", centre, .less, radius), { r in
                guard case .location(let l)? = r.fields["where"] else { return false }
                // Equirectangular is within 0.1% of haversine at this size; keep off the edge.
                let dx = (l.longitude - 24.5) * .pi / 180 * cos((l.latitude + 59.5) / 2 * .pi / 180) * 6_371_008.8
                let dy = (l.latitude - 59.5) * .pi / 180 * 6_371_008.8
                return (dx * dx + dy * dy).squareRoot() < radius
            })
        case 11:
            let (p, f) = randomPredicate(&g, depth: depth + 1)
            return (.not(p), { !f($0) })
        default:
            let parts = (0..<2).map { _ in randomPredicate(&g, depth: depth + 1) }
            return (.and(parts.map(\.0)), { r in parts.allSatisfy { $0.1(r) } })
        }
    }

    /// A store holding `records`, and its private database as a store opened with `reading`
    /// reads it.
    func store(with records: [Record], reading: ZoneReading = .inMemory) throws -> (TempStore, Database) {
        let t = try TempStore()
        let db = try t.db()
        for chunk in stride(from: 0, to: records.count, by: 400) {
            let result = try db.modify(saving: Array(records[chunk..<min(chunk + 400, records.count)]))
            if let e = result.error { throw e }
        }
        return (t, try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice", deviceID: "test-device")))
    }

    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func randomQueriesEqualABruteForceFilterAcrossPages(reading: ZoneReading) throws {
        var g = G(state: 2026)
        let records = Self.randomRecords(1_000, &g)
        let (t, db) = try store(with: records, reading: reading)
        _ = t
        let stored = try db.allRecords()
        for round in 0..<120 {
            let (predicate, test) = Self.randomPredicate(&g)
            let sortKeys = [("n", true), ("score", false), ("title", true), ("when", false), ("owner", false)].shuffled(using: &g).prefix(Int.random(in: 0...2, using: &g))
            let sort = sortKeys.map { QuerySortDescriptor(key: $0.0, ascending: $0.1) }
            // The expected order, by hand: each key (missing values last), then the name.
            func key(_ r: Record, _ k: String) -> (Int, Double, String) {
                switch r.fields[k] {
                case .int64(let i)?: (0, Double(i), "")
                case .double(let d)?: (0, d, "")
                case .timestamp(let ts)?: (0, ts.timeIntervalSince1970, "")
                // Composed first: Swift's `<` does not order strings that mix composed and
                // decomposed letters.
                case .string(let s)?: (0, 0, s.precomposedStringWithCanonicalMapping)
                case .reference(let r)?: (0, 0, r.recordName)
                default: (1, 0, "")
                }
            }
            let expected = stored.filter(test).sorted { a, b in
                for (k, asc) in sortKeys {
                    let (x, y) = (key(a, k), key(b, k))
                    if x.0 != y.0 { return x.0 < y.0 }
                    if x.1 != y.1 { return asc ? x.1 < y.1 : x.1 > y.1 }
                    if x.2 != y.2 { return asc ? x.2 < y.2 : x.2 > y.2 }
                }
                return a.recordID.recordName < b.recordID.recordName
            }.map(\.recordID.recordName)
            var got: [String] = []
            var cursor: QueryCursor?
            let limit = [13, 100, 400].randomElement(using: &g)!
            repeat {
                let page = try db.query(RecordQuery(recordType: "Thing", predicate: predicate, sortDescriptors: sort), limit: limit, cursor: cursor)
                #expect(page.records.count <= limit)
                got += page.records.map(\.recordID.recordName)
                cursor = page.cursor
            } while cursor != nil && got.count <= stored.count
            #expect(got == expected, "round \(round): \(predicate) sorted by \(sort)")
        }
    }

    /// The catalog keeps each sort's records in order between queries (SortedRecords):
    /// saves, edits and deletes in between, one at a time and in batches past the one-pass
    /// threshold, from this opening and from another, leave every page equal to a fresh
    /// brute-force sort.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func sortedRecordsStayRightAcrossWritesBetweenQueries(reading: ZoneReading) throws {
        var g = G(state: 77)
        let records = Self.randomRecords(600, &g)
        let (t, db) = try store(with: records, reading: reading)
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        let sorts: [[QuerySortDescriptor]] = [[QuerySortDescriptor(key: "n")], [QuerySortDescriptor(key: "score", ascending: false), QuerySortDescriptor(key: "title")], []]
        func check(_ round: Int) throws {
            let stored = try db.allRecords()
            // TRUEPREDICATE, a range, and an equality the catalog keeps a group for.
            let predicates: [QueryPredicate] = [.all, .compare("n", .greater, .int(0)),
                                                .and([.compare("owner", .equal, .reference("p1")), .compare("n", .greater, .int(-20))])]
            for sort in sorts {
                let predicate = predicates[(round + sorts.firstIndex(of: sort)!) % 3]
                var got: [String] = []
                var cursor: QueryCursor?
                repeat {
                    let page = try db.query(RecordQuery(recordType: "Thing", predicate: predicate, sortDescriptors: sort), limit: 97, cursor: cursor)
                    got += page.records.map(\.recordID.recordName)
                    cursor = page.cursor
                } while cursor != nil && got.count <= stored.count
                let expected = stored.filter { predicate.matches($0) }.sorted { a, b in
                    RecordQuery.compare(sort.map { QueryPredicate.field($0.key, of: a) }, a.recordID.recordName,
                                     sort.map { QueryPredicate.field($0.key, of: b) }, b.recordID.recordName, sort) < 0
                }.map(\.recordID.recordName)
                #expect(got == expected, "round \(round), sorted by \(sort)")
                // Every record once, in the right order, and the values match the records.
                #expect(Set(got).count == got.count, "round \(round): a record repeated")
            }
        }
        try check(0)
        for round in 1...8 {
            let writer = round % 2 == 0 ? db : other
            let count = [1, 5, 30, 300][round % 4] // 300 passes SortedRecords.mergeThreshold
            let all = try writer.allRecords().filter { $0.recordType == "Thing" }
            var saves: [Record] = []
            var deletes: [RecordID] = []
            for i in 0..<count {
                switch Int.random(in: 0..<3, using: &g) {
                case 0:
                    var r = all.randomElement(using: &g)!
                    r["n"] = .int64(Int64.random(in: -50...50, using: &g))
                    if Bool.random(using: &g) { r["score"] = nil }
                    if !saves.contains(where: { $0.recordID == r.recordID }) && !deletes.contains(r.recordID) { saves.append(r) }
                case 1:
                    let id = all.randomElement(using: &g)!.recordID
                    if !saves.contains(where: { $0.recordID == id }) && !deletes.contains(id) { deletes.append(id) }
                default:
                    saves.append(Record(recordType: "Thing", recordID: RecordID(recordName: "new\(round)-\(i)"),
                                        fields: ["n": .int64(Int64.random(in: -50...50, using: &g)), "title": .string(Self.words.randomElement(using: &g)!)]))
                }
            }
            let result = try writer.modify(saving: saves, deleting: deletes, options: ModifyOptions(savePolicy: .changedKeys))
            if let e = result.error { throw e }
            try check(round)
        }
    }

    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func everyComparatorOnEveryFieldTypeItAppliesTo(reading: ZoneReading) throws {
        let day: Int64 = 86_400_000
        let records = [
            Record(recordType: "T", recordID: RecordID(recordName: "a"), fields: ["s": .string("apple"), "i": .int64(1), "d": .double(1.5), "t": .timestamp(milliseconds: day),
                                                                             "r": .reference(Reference(recordName: "x")), "l": .list(.string, [.string("red"), .string("green")]),
                                                                             "li": .list(.int64, [.int64(3), .int64(4)])]),
            Record(recordType: "T", recordID: RecordID(recordName: "b"), fields: ["s": .string("banana"), "i": .int64(2), "d": .double(2.5), "t": .timestamp(milliseconds: 2 * day),
                                                                             "r": .reference(Reference(recordName: "y")), "l": .list(.string, [.string("blue")]),
                                                                             "li": .list(.int64, [.int64(5)])]),
            Record(recordType: "T", recordID: RecordID(recordName: "c"), fields: ["s": .string("cherry"), "i": .int64(3), "d": .double(3.5), "t": .timestamp(milliseconds: 3 * day)]),
        ]
        let (t, db) = try store(with: records, reading: reading)
        _ = t
        func names(_ format: String, _ args: [PredicateValue] = []) throws -> [String] {
            try db.query(RecordQuery(recordType: "T", predicate: PredicateParser.parse(format, arguments: args))).records.map(\.recordID.recordName)
        }
        // Strings, integers, doubles and dates, each with every operator.
        for (key, lo, mid, hi) in [("s", "'apple'", "'banana'", "'cherry'"), ("i", "1", "2", "3"), ("d", "1.5", "2.5", "3.5"),
                                   ("t", "%@", "%@", "%@")] as [(String, String, String, String)] {
            let args: [PredicateValue] = key == "t" ? [.date(milliseconds: 2 * day)] : []
            #expect(try names("\(key) == \(mid)", args) == ["b"], "\(key) ==")
            #expect(try names("\(key) != \(mid)", args) == ["a", "c"], "\(key) !=")
            #expect(try names("\(key) < \(mid)", args) == ["a"], "\(key) <")
            #expect(try names("\(key) <= \(mid)", args) == ["a", "b"], "\(key) <=")
            #expect(try names("\(key) > \(mid)", args) == ["c"], "\(key) >")
            #expect(try names("\(key) >= \(mid)", args) == ["b", "c"], "\(key) >=")
            if key != "t" {
                #expect(try names("\(key) BETWEEN {\(lo), \(mid)}") == ["a", "b"], "\(key) BETWEEN")
                #expect(try names("\(key) IN {\(lo), \(hi)}") == ["a", "c"], "\(key) IN")
            }
        }
        #expect(try names("t BETWEEN %@", [.list([.date(milliseconds: day), .date(milliseconds: 2 * day)])]) == ["a", "b"])
        #expect(try names("i > 1.5") == ["b", "c"], "an integer field compared with a double")
        #expect(try names("s BEGINSWITH 'ba'") == ["b"])
        #expect(try names("r == %@", [.reference("y")]) == ["b"])
        #expect(try names("r == REFERENCE('x')") == ["a"])
        #expect(try names("r != 'x'") == ["b"], "a record without the field matches no comparison, != included")
        #expect(try names("l CONTAINS 'blue'") == ["b"])
        #expect(try names("'red' IN l") == ["a"])
        #expect(try names("li CONTAINS 4") == ["a"])
        #expect(try names("recordID == %@", [.reference("c")]) == ["c"])
        #expect(try names("creationDate > %@", [.date(milliseconds: 0)]) == ["a", "b", "c"])
        #expect(try names("NOT i == 2") == ["a", "c"])
        #expect(try names("i >= 2 AND s BEGINSWITH 'c'") == ["c"])
        // Wrong uses name the field and the fix.
        for (format, message) in [("s BEGINSWITH 1", "BEGINSWITH takes a string"), ("i == 'x'", "cannot be compared"), ("zz == 1", "has no field \"zz\""),
                                  ("distanceToLocation:fromLocation:(s, LOCATION(1, 2)) < 3", "needs a location field"), ("i BEGINSWITH 'x'", "needs a string field"),
                                  ("i IN {1, 'x'}", "cannot be compared"), ("i BETWEEN {1, 'x'}", "cannot be compared")] {
            do {
                _ = try names(format)
                Issue.record("\(format) ran")
            } catch let e as CKError {
                #expect(e.message.contains(message), "\(format): \(e)")
            } catch {
                #expect(error.localizedDescription.contains(message) || "\(error)".contains(message), "\(format): \(error)")
            }
        }
        #expect(throws: CKError.self) { try db.query(RecordQuery(recordType: "Nope")) }
        #expect(throws: CKError.self) { try db.query(RecordQuery(recordType: "T", sortDescriptors: [QuerySortDescriptor(key: "l")])) }
    }

    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func cursorsSurviveWritesAndRefuseOtherQueries(reading: ZoneReading) throws {
        let records = (0..<10).map { Record(recordType: "T", recordID: RecordID(recordName: "r\($0)"), fields: ["n": .int64(Int64($0))]) }
        let (t, db) = try store(with: records, reading: reading)
        let q = RecordQuery(recordType: "T", sortDescriptors: [QuerySortDescriptor(key: "n")])
        let first = try db.query(q, limit: 4)
        #expect(first.records.map(\.recordID.recordName) == ["r0", "r1", "r2", "r3"])
        // Another process deletes a record already seen and adds one before the cursor: the next page neither repeats nor skips.
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice"))
        _ = try other.modify(saving: [Record(recordType: "T", recordID: RecordID(recordName: "early"), fields: ["n": .int64(-1)]),
                                      Record(recordType: "T", recordID: RecordID(recordName: "late"), fields: ["n": .int64(5)])],
                             deleting: [RecordID(recordName: "r1")])
        let second = try db.query(q, limit: 4, cursor: first.cursor)
        #expect(second.records.map(\.recordID.recordName) == ["r4", "late", "r5", "r6"])
        let third = try db.query(q, limit: 4, cursor: second.cursor)
        #expect(third.records.map(\.recordID.recordName) == ["r7", "r8", "r9"])
        #expect(third.cursor == nil)
        #expect(throws: CKError.self) { try db.query(RecordQuery(recordType: "T", predicate: .compare("n", .greater, .int(0)), sortDescriptors: q.sortDescriptors), cursor: first.cursor) }
        #expect(throws: CKError.self) { try db.query(q, cursor: QueryCursor(text: "garbage")) }
        // desiredKeys limits the fields.
        let shaped = try db.query(q, limit: 1, desiredKeys: [])
        #expect(shaped.records.first?.fields.isEmpty == true)
    }

    /// Swift's `<` gives no order between "cafés cafés" and "cafe\u{301}s café" (neither is
    /// less); queries order strings by their composed forms, a total order.
    @Test func stringsOrderByTheirComposedForms() {
        let composed = "caf\u{e9}s caf\u{e9}s", mixed = "cafe\u{301}s caf\u{e9}"
        #expect(composed.canonicalOrder(mixed) == 1 && mixed.canonicalOrder(composed) == -1)
        #expect("cafe\u{301}".canonicalOrder("caf\u{e9}") == 0)
        #expect(QueryPredicate.order(.string(mixed), .string(composed)) == -1)
    }
}
