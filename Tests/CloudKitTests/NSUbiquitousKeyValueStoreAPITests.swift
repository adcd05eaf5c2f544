import Foundation
import Testing
import TestSupport
import CloudStore
import CloudKit

/// `NSUbiquitousKeyValueStore`'s untyped API over the engine's store: getters that answer nil,
/// 0 or false for a missing key or another type, setters that take Foundation's property-list
/// objects and refuse others with their type.
@Suite struct NSUbiquitousKeyValueStoreAPITests {
    func client(_ t: TempStore, user: String = "alice") throws -> NSUbiquitousKeyValueStore {
        try NSUbiquitousKeyValueStore(store: t.store, user: user, synchronizeEvery: nil)
    }

    @Test func typedGettersAnswerNilZeroOrFalseForMissingKeysAndOtherTypes() throws {
        let t = try TempStore()
        let kv = try client(t)
        kv.set("text", forKey: "s")
        kv.set(Int64(42), forKey: "i")
        kv.set(2.5, forKey: "d")
        kv.set(true, forKey: "b")
        kv.set(Data([1, 2]), forKey: "data")
        kv.set([1, "two", [3.5]] as [Any], forKey: "a")
        kv.set(["k": "v", "n": 1] as [String: Any], forKey: "dict")
        // Literals pick Apple's overloads, as in the README.
        kv.set(42, forKey: "literal")
        kv.set(0.5, forKey: "literalReal")
        #expect(kv.value(forKey: "literal") == .integer(42))
        #expect(kv.value(forKey: "literalReal") == .real(0.5))
        kv.removeObject(forKey: "literal")
        kv.removeObject(forKey: "literalReal")
        #expect(kv.string(forKey: "s") == "text")
        #expect(kv.longLong(forKey: "i") == 42)
        #expect(kv.double(forKey: "d") == 2.5)
        #expect(kv.bool(forKey: "b"))
        #expect(kv.data(forKey: "data") == Data([1, 2]))
        #expect(kv.array(forKey: "a")?.count == 3)
        #expect(kv.array(forKey: "a")?[1] as? String == "two")
        #expect(kv.dictionary(forKey: "dict")?["k"] as? String == "v")
        #expect(kv.object(forKey: "i") as? Int == 42)
        // Missing keys.
        #expect(kv.string(forKey: "nope") == nil)
        #expect(kv.longLong(forKey: "nope") == 0)
        #expect(kv.double(forKey: "nope") == 0)
        #expect(kv.bool(forKey: "nope") == false)
        #expect(kv.data(forKey: "nope") == nil)
        #expect(kv.array(forKey: "nope") == nil)
        #expect(kv.dictionary(forKey: "nope") == nil)
        #expect(kv.object(forKey: "nope") == nil)
        // Wrong types.
        #expect(kv.string(forKey: "i") == nil)
        #expect(kv.longLong(forKey: "s") == 0)
        #expect(kv.double(forKey: "a") == 0)
        #expect(kv.bool(forKey: "s") == false)
        #expect(kv.data(forKey: "s") == nil)
        #expect(kv.array(forKey: "dict") == nil)
        #expect(kv.dictionary(forKey: "a") == nil)
        // Numbers read as NSNumber reads them.
        #expect(kv.double(forKey: "i") == 42)
        #expect(kv.longLong(forKey: "d") == 2)
        #expect(kv.longLong(forKey: "b") == 1)
        #expect(kv.dictionaryRepresentation.count == 7)
        kv.removeObject(forKey: "s")
        #expect(kv.string(forKey: "s") == nil)
        #expect(kv.synchronize())
        // Another client reads the same values, with their types.
        let other = try client(t)
        #expect(other.value(forKey: "a") == .array([.integer(1), .string("two"), .array([.real(3.5)])]))
        #expect(other.value(forKey: "data") == .data([1, 2]))
        #expect(other.value(forKey: "s") == nil)
    }

    @Test func nonPlistValuesAreRefusedWithTheirType() throws {
        let t = try TempStore()
        let kv = try client(t)
        struct Custom {}
        kv.set(Custom(), forKey: "c")
        #expect(kv.object(forKey: "c") == nil)
        #expect(kv.lastError?.code == .invalidArguments)
        #expect(kv.lastError?.message.contains("Custom") == true)
        kv.set(["k": URL(fileURLWithPath: "/")] as [String: Any], forKey: "u")
        #expect(kv.lastError?.message.contains("URL") == true)
        #expect(throws: CKError.self) { try kv.setValue(.string("nul\u{0}"), forKey: "n") }
        #expect(kv.entries.isEmpty)
    }
}
