import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A field's schema indexes decide how a query may use it, as CloudKit's do: every index its
/// type can have until one is removed in development, and production has what the last
/// deploy copied.
@Suite struct SchemaIndexTests {
    func store() throws -> (TempStore, Database, Schema) {
        let t = try TempStore()
        let db = try t.db()
        _ = try db.modify(saving: [record("a", type: "Item", ["kind": .string("tool hammer"), "rank": .int64(3), "blob": .bytes(Data([1]))]),
                                   record("b", type: "Item", ["kind": .string("toy"), "rank": .int64(1), "blob": .bytes(Data([2]))])])
        return (t, db, try t.store.container().schema)
    }

    func names(_ db: Database, _ format: String, sort: [QuerySortDescriptor] = []) throws -> [String] {
        try db.query(RecordQuery(recordType: "Item", predicate: PredicateParser.parse(format), sortDescriptors: sort)).records.map(\.recordID.recordName)
    }

    func refusal(_ db: Database, _ format: String, sort: [QuerySortDescriptor] = []) -> String? {
        do {
            _ = try names(db, format, sort: sort)
            return nil
        } catch let e as CKError {
            #expect(e.code == .invalidArguments, "\(e)")
            return e.message
        } catch {
            return "\(error)"
        }
    }

    @Test func everyFieldHasItsTypesIndexesUntilOneIsRemoved() throws {
        let (t, db, schema) = try store()
        _ = t
        #expect(try schema.indexes(of: "Item", field: "kind", environment: .development) == [.queryable, .sortable, .searchable])
        #expect(try schema.indexes(of: "Item", field: "rank", environment: .development) == [.queryable, .sortable])
        #expect(try schema.indexes(of: "Item", field: "blob", environment: .development) == [])
        #expect(try names(db, "kind == 'toy'") == ["b"])
        #expect(try names(db, "kind < 'toy'", sort: [QuerySortDescriptor(key: "kind")]) == ["a"])
        #expect(try names(db, "self CONTAINS 'hammer'") == ["a"])

        try schema.setIndex(.queryable, on: "kind", of: "Item", present: false)
        let refused = refusal(db, "kind == 'toy'")
        #expect(refused?.contains("field \"kind\" of record type Item is not marked queryable in the development schema") == true, "\(refused ?? "ran")")
        #expect(refused?.contains("ckfs schema index add Item kind queryable") == true)
        #expect(refusal(db, "kind IN {'toy'}") != nil && refusal(db, "kind BEGINSWITH 't'") != nil && refusal(db, "NOT kind != 'toy'") != nil)
        #expect(try names(db, "kind >= 'toy'") == ["b"], "a range needs sortable, which kind still has")

        try schema.setIndex(.sortable, on: "rank", of: "Item", present: false)
        #expect(refusal(db, "rank > 0")?.contains("not marked sortable") == true)
        #expect(refusal(db, "TRUEPREDICATE", sort: [QuerySortDescriptor(key: "rank")])?.contains("so a query cannot sort by it") == true)
        #expect(try names(db, "rank == 3") == ["a"])
        #expect(try names(db, "TRUEPREDICATE", sort: [QuerySortDescriptor(key: "creationDate")]) == ["a", "b"], "system fields are always indexed")

        try schema.setIndex(.searchable, on: "kind", of: "Item", present: false)
        #expect(refusal(db, "self CONTAINS 'hammer'")?.contains("no string field marked searchable") == true)

        try schema.setIndex(.queryable, on: "kind", of: "Item", present: true)
        #expect(try names(db, "kind == 'toy'") == ["b"])
        // Another opening reads the indexes from schema.json.
        let other = try t.reopen().container().schema
        #expect(try other.indexes(of: "Item", field: "kind", environment: .development) == [.queryable, .sortable])
        #expect(try other.indexes(of: "Item", field: "rank", environment: .development) == [.queryable])
    }

    @Test func productionHasTheIndexesOfTheLastDeploy() throws {
        let (t, db, schema) = try store()
        try schema.setIndex(.queryable, on: "kind", of: "Item", present: false)
        try schema.deploy()
        let prod = try t.store.container().database(.private, caller: Caller(userName: "alice", deviceID: "test-device"), environment: .production)
        let refused = refusal(prod, "kind == 'toy'")
        #expect(refused?.contains("in the production schema") == true && refused?.contains("in development, then `ckfs schema deploy`") == true, "\(refused ?? "ran")")
        try schema.setIndex(.queryable, on: "kind", of: "Item", present: true)
        #expect(try names(db, "kind == 'toy'") == ["b"])
        #expect(refusal(prod, "kind == 'toy'") != nil, "production changes only by deploy")
        try schema.deploy()
        #expect(try names(prod, "kind == 'toy'") == [], "no production records, but the query runs")
    }

    /// A word search reads only the strings marked searchable, as CloudKit's does: in a
    /// process that keeps the zone in memory, one that reads the zone's index file, and a
    /// query subscription's test of a saved record.
    @Test func aWordSearchReadsOnlySearchableStrings() throws {
        let t = try TempStore()
        let db = try t.db()
        _ = try db.modify(saving: [record("a", type: "Note", ["title": .string("garden plan"), "body": .string("buy a hammer")]),
                                   record("b", type: "Note", ["title": .string("hammer time"), "body": .string("garden")]),
                                   record("c", type: "Note", ["title": .string("list"), "tags": .list(.string, [.string("hammer"), .string("nail")])])])
        let schema = try t.store.container().schema
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice", deviceID: "test-device"))
        func found(_ db: Database, _ words: String) throws -> [String] {
            try db.query(RecordQuery(recordType: "Note", predicate: PredicateParser.parse("self CONTAINS '\(words)'"),
                                     sortDescriptors: [QuerySortDescriptor(key: "title")])).records.map(\.recordID.recordName).sorted()
        }
        for d in [db, indexed] {
            #expect(try found(d, "hammer") == ["a", "b", "c"], "every string field is searchable at first, lists of strings too")
            #expect(try found(d, "garden hammer") == ["a", "b"])
        }

        try schema.setIndex(.searchable, on: "body", of: "Note", present: false)
        for d in [db, indexed] {
            #expect(try found(d, "hammer") == ["b", "c"], "body is no longer searched")
            #expect(try found(d, "garden hammer") == [], "a's garden is in its title but its hammer in body; b's the other way")
            #expect(try found(d, "garden") == ["a"])
        }
        try schema.setIndex(.searchable, on: "tags", of: "Note", present: false)
        #expect(try found(db, "nail") == [] && found(indexed, "nail") == [])

        try db.saveSubscription(Subscription(recordType: "Note", predicate: try PredicateParser.parse("self CONTAINS 'hammer'"),
                                             subscriptionID: "hammers", options: [.firesOnRecordCreation]))
        try db.save(record("d", type: "Note", ["title": .string("d"), "body": .string("hammer")]))
        try db.save(record("e", type: "Note", ["title": .string("hammer"), "body": .string("e")]))
        let heard = try t.store.container().notificationLog(user: "alice").changes(since: nil, excludingDevice: "other-device").notifications
        #expect(heard.compactMap(\.recordID?.recordName) == ["e"], "a subscription searches the same fields")
    }

    /// A process that runs on (the mount, `ckfs serve`) sees an index removed or added, and a
    /// deploy, made by another: its schema is read again when `schema.json` is replaced.
    @Test func anotherOpeningSeesIndexChangesAndDeploys() throws {
        let (t, db, schema) = try store()
        let other = try t.reopen()
        let otherDB = try other.container().database(.private, caller: Caller(userName: "alice", deviceID: "other-device"))
        let otherProd = try other.container().database(.private, caller: Caller(userName: "alice", deviceID: "other-device"), environment: .production)
        #expect(try names(otherDB, "kind == 'toy'") == ["b"])
        #expect { try names(otherProd, "kind == 'toy'") } throws: { ($0 as? CKError)?.code == .unknownItem }

        try schema.setIndex(.queryable, on: "kind", of: "Item", present: false)
        #expect(refusal(otherDB, "kind == 'toy'")?.contains("not marked queryable") == true, "the removal is seen")
        try schema.setIndex(.queryable, on: "kind", of: "Item", present: true)
        #expect(try names(otherDB, "kind == 'toy'") == ["b"], "and so is the index added back")
        try db.save(record("c", type: "Item", ["color": .string("red")]))
        #expect(try names(otherDB, "color == 'red'") == ["c"], "and a field another opening added")

        try schema.setIndex(.sortable, on: "rank", of: "Item", present: false)
        try schema.deploy()
        #expect(try names(otherProd, "kind == 'toy'") == [], "the deploy is seen")
        #expect(refusal(otherProd, "rank > 0")?.contains("not marked sortable in the production schema") == true)
        _ = db
    }

    @Test func indexesThatCannotBeAreRefusedWithTheReason() throws {
        let (t, _, schema) = try store()
        _ = t
        #expect { try schema.setIndex(.searchable, on: "blob", of: "Item", present: true) } throws: {
            ($0 as? CKError)?.message.contains("a BYTES field cannot be searchable") == true
        }
        #expect { try schema.setIndex(.queryable, on: "nope", of: "Item", present: true) } throws: {
            ($0 as? CKError)?.message.contains("record type Item has no field \"nope\"; its fields are blob, kind, rank") == true
        }
        #expect { try schema.setIndex(.queryable, on: "kind", of: "Nope", present: true) } throws: {
            ($0 as? CKError)?.message.contains("no record type Nope") == true
        }
    }

    /// A schema.json written before indexes existed has none listed: every field has every
    /// index its type can have, and a new index setting keeps the types as they were.
    @Test func aSchemaFileWithoutIndexesGivesEveryFieldItsIndexes() throws {
        let (t, db, _) = try store()
        let path = t.store.layout.schemaFile(try t.store.container().identifier)
        try Data(#"{"format": 1, "development": {"Item": {"kind": "STRING", "rank": "INT64", "blob": "BYTES"}}, "production": {}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let schema = try t.reopen().container().schema
        #expect(try schema.indexes(of: "Item", field: "kind", environment: .development) == [.queryable, .sortable, .searchable])
        try schema.setIndex(.sortable, on: "rank", of: "Item", present: false)
        let json = try JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(json["development"]?["Item"]?["kind"] == .string("STRING"))
        #expect(json["indexes"]?["development"]?["Item"]?["rank"] == .array([.string("QUERYABLE")]))
        _ = db
    }
}
