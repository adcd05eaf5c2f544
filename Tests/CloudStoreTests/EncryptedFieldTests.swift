import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Encrypted fields (CloudKit's `encryptedValues`) as Apple documents them: kept in the
/// private database only, never references or assets, typed `ENCRYPTED_…` in the schema so a
/// field cannot change between encrypted and not, and never indexed, so no query uses them.
@Suite struct EncryptedFieldTests {
    func contact(_ name: String = "c1", phone: String = "+33 1 23 45 67 89") -> Record {
        var r = record(name, type: "Contact", ["name": .string("Ada")])
        r[encrypted: "phone"] = .string(phone)
        return r
    }

    @Test func anEncryptedFieldIsSavedFetchedAndKeptInTheFileAsSuch() throws {
        let t = try TempStore()
        let db = try t.db()
        let saved = try db.save(contact())
        #expect(saved.encryptedKeys == ["phone"])
        let fetched = try t.reopen().container().database(.private, caller: Caller(userName: "alice")).record(for: id("c1"))
        #expect(fetched[encrypted: "phone"] == .string("+33 1 23 45 67 89"))
        #expect(fetched.encryptedKeys == ["phone"] && fetched.fieldType("phone")?.name == "ENCRYPTED_STRING")
        #expect(fetched[encrypted: "name"] == nil && fetched.fieldType("name")?.name == "STRING")

        // The record's file says so as Apple's field dictionaries do: the plain type name and
        // "isEncrypted": true; the schema names the type ENCRYPTED_STRING.
        WriteBehind.drainAll()
        let file = try #require(FileManager.default.enumerator(atPath: t.path)?.compactMap { $0 as? String }.first { $0.hasSuffix("/c1.json") })
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: t.path + "/" + file))) as? [String: Any])
        let fields = try #require(json["fields"] as? [String: [String: Any]])
        #expect(fields["phone"]?["type"] as? String == "STRING" && fields["phone"]?["isEncrypted"] as? Bool == true)
        #expect(fields["name"]?["isEncrypted"] == nil)
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: t.path + "/" + (FileManager.default.enumerator(atPath: t.path)?.compactMap { $0 as? String }.first { $0.hasSuffix("schema.json") })!))) as? [String: Any])
        #expect((schema["development"] as? [String: [String: String]])?["Contact"]?["phone"] == "ENCRYPTED_STRING")
        // Its words are not searched: the server cannot read them.
        #expect(!saved.allTokens.contains("+33"))
    }

    @Test func thePublicDatabaseRefusesEncryptedFields() throws {
        let t = try TempStore()
        let e = try #require(try t.db(.public).modify(saving: [contact()]).saveResults[0].1.error)
        #expect(e.code == .invalidArguments)
        #expect(e.message.contains("public database") && e.message.contains("\"phone\""), "\(e.message)")
    }

    @Test func referencesAndAssetsCannotBeEncrypted() throws {
        let t = try TempStore()
        var r = record("c1", type: "Contact")
        r[encrypted: "friend"] = .reference(Reference(recordName: "c2", action: .none))
        let e = try #require(try t.db().modify(saving: [r]).saveResults[0].1.error)
        #expect(e.code == .invalidArguments && e.message.contains("\"friend\"") && e.message.contains("REFERENCE"), "\(e.message)")
    }

    @Test func aFieldNeverChangesBetweenEncryptedAndNot() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(contact())
        var plain = record("c2", type: "Contact", ["phone": .string("+1 555")])
        var e = try #require(try db.modify(saving: [plain]).saveResults[0].1.error)
        #expect(e.code == .invalidArguments && e.message.contains("ENCRYPTED_STRING") && e.message.contains("encryptedValues"), "\(e.message)")
        plain = record("c3", type: "Contact")
        plain[encrypted: "name"] = .string("Grace")
        e = try #require(try db.modify(saving: [plain]).saveResults[0].1.error)
        #expect(e.code == .invalidArguments && e.message.contains("cannot become encrypted"), "\(e.message)")
        // A new field may be encrypted from its first save on.
        var more = contact("c4")
        more[encrypted: "notes"] = .list(.string, [.string("likes tea")])
        #expect(try db.save(more).fieldType("notes")?.name == "ENCRYPTED_STRING_LIST")
    }

    @Test func noQueryUsesAnEncryptedField() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(contact())
        for (format, sort) in [("phone == '+33 1 23 45 67 89'", []), ("name == 'Ada'", [QuerySortDescriptor(key: "phone")])] {
            do {
                _ = try db.query(RecordQuery(recordType: "Contact", predicate: PredicateParser.parse(format), sortDescriptors: sort))
                Issue.record("\(format) sorted by \(sort.map(\.key)) was answered")
            } catch let e as CKError {
                #expect(e.code == .invalidArguments && e.message.contains("\"phone\"") && e.message.contains("ENCRYPTED_STRING"), "\(e.message)")
            }
        }
        // A reader from the zone's index finds the record by its other fields; the index holds
        // no value of the encrypted one.
        let indexed = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
        #expect(try indexed.query(RecordQuery(recordType: "Contact", predicate: PredicateParser.parse("name == 'Ada'"))).records.count == 1)
        let file = try #require(FileManager.default.enumerator(atPath: t.path)?.compactMap { $0 as? String }.first { $0.hasSuffix("_defaultZone/index.sqlite") })
        let keys = try runPython("""
        import sqlite3
        print(sorted({k for (k,) in sqlite3.connect("\(t.path)/\(file)").execute("SELECT key FROM fields")}))
        """)
        #expect(String(decoding: keys, as: UTF8.self).contains("'name'") && !String(decoding: keys, as: UTF8.self).contains("phone"), "\(String(decoding: keys, as: UTF8.self))")
        #expect(try db.query(RecordQuery(recordType: "Contact", predicate: PredicateParser.parse("self CONTAINS '+33'"))).records.isEmpty)
        #expect(try db.query(RecordQuery(recordType: "Contact", predicate: PredicateParser.parse("self CONTAINS 'ada'"))).records.count == 1)
        let schema = try t.store.container().schema
        #expect(try schema.indexes(of: "Contact", field: "phone", environment: .development).isEmpty)
        #expect(throws: CKError.self) { try schema.setIndex(.queryable, on: "phone", of: "Contact", present: true) }
    }

    /// A save of changed keys keeps the encrypted fields it does not touch encrypted.
    @Test func changedKeysSavesKeepUntouchedFieldsEncrypted() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(contact())
        var change = record("c1", type: "Contact")
        change["name"] = .string("Ada L.")
        let saved = try db.save(change, policy: .changedKeys)
        #expect(saved[encrypted: "phone"] == .string("+33 1 23 45 67 89") && saved["name"] == .string("Ada L."))
        #expect(saved.encryptedKeys == ["phone"])
    }
}
