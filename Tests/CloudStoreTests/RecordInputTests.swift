import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `Database.recordToSave`: the one way every edge (the mount's file text, `ckfs record save`,
/// `records/modify`) makes a record dictionary into the record a save takes.
@Suite struct RecordInputTests {
    /// A schema with a BYTES field, a STRING_LIST field and a DOUBLE field, made by a typed save.
    static func schemaDatabase() throws -> (TempStore, Database) {
        let t = try TempStore()
        let db = try t.db()
        _ = try db.save(record("typed", type: "Clip", ["data": .bytes(Data([1])), "tags": .list(.string, [.string("a")]), "rating": .double(1.5)]))
        return (t, db)
    }

    @Test func aFieldWithoutItsTypeTakesTheSchemasType() throws {
        let (t, db) = try Self.schemaDatabase()
        defer { _ = t }
        let input: JSONValue = .object([
            "recordType": .string("Clip"), "recordName": .string("untyped"),
            "fields": .object([
                "data": .object(["value": .string("aGVsbG8=")]),  // a string by its shape; BYTES in the schema
                "tags": .object(["value": .array([])]),  // no shape at all; STRING_LIST in the schema
                "rating": .object(["value": .int(4)]),  // an integer by its shape; DOUBLE in the schema
                "note": .object(["value": .string("new")]),  // not in the schema: its shape
            ]),
        ])
        let made = try db.recordToSave(input, zoneID: .default)
        #expect(made["data"] == .bytes(Data("hello".utf8)))
        #expect(made["tags"] == .list(.string, []))
        #expect(made["rating"] == .double(4))
        #expect(made["note"] == .string("new"))
        let saved = try db.save(made)
        #expect(saved["data"] == .bytes(Data("hello".utf8)), "the schema takes it as it is")
    }

    @Test func aFieldThatSaysItsTypeKeepsIt() throws {
        let (t, db) = try Self.schemaDatabase()
        defer { _ = t }
        let input: JSONValue = .object([
            "recordType": .string("Clip"), "recordName": .string("typed-again"),
            "fields": .object(["data": .object(["type": .string("STRING"), "value": .string("aGVsbG8=")])]),
        ])
        #expect(try db.recordToSave(input, zoneID: .default)["data"] == .string("aGVsbG8="), "what the client says wins; the save checks it")
    }

    /// An edge's own forms are rewritten after the schema typed the field, so the edge sees the type.
    @Test func anEdgeRewritesEachFieldAfterTheSchemaTypedIt() throws {
        let (t, db) = try Self.schemaDatabase()
        defer { _ = t }
        let input: JSONValue = .object([
            "recordType": .string("Clip"), "recordName": .string("rewritten"),
            "fields": .object(["data": .object(["value": .string("ignored")]), "rating": .object(["type": .string("DOUBLE"), "value": .double(2)])]),
        ])
        var seen: [String: String] = [:]
        let made = try db.recordToSave(input, zoneID: .default) { (key, field) throws(CKError) -> JSONValue in
            seen[key] = field["type"]?.stringValue
            guard key == "data" else { return field }
            return .object(["type": .string("BYTES"), "value": .string("d29ybGQ=")])
        }
        #expect(seen == ["data": "BYTES", "rating": "DOUBLE"])
        #expect(made["data"] == .bytes(Data("world".utf8)))
        do {
            _ = try db.recordToSave(input, zoneID: .default) { (key, field) throws(CKError) -> JSONValue in
                throw CKError(.invalidArguments, "field \(key) refused by the edge")
            }
            Issue.record("the edge's error was not thrown")
        } catch {
            #expect(error.code == .invalidArguments && error.message.hasPrefix("field "))
        }
    }
}
