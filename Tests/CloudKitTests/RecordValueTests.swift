import CloudKit
import Testing
import TestSupport

/// Record fields as CloudKit code reads and writes them, with `import CloudKit` alone: the
/// generic subscript (`let title: String? = record["title"]`), casts, `CKRecordValue`
/// dictionaries and `CKRecord.FieldKey`.
@Suite struct RecordValueTests {
    @Test func fieldsReadAsTheTypeAskedFor() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "lamp"))
        let defaults: [CKRecord.FieldKey: CKRecordValue] = ["title": "Lamp", "count": 3, "price": 9.5]
        for (key, value) in defaults { record[key] = value }
        record["tags"] = ["desk", "light"]
        record["when"] = Date(timeIntervalSince1970: 1_700_000_000)
        record["done"] = true
        record["flags"] = [true, false]
        let saved = try await db.save(record)

        let title: String? = saved["title"]
        let count: Int? = saved["count"]
        let price: Double? = saved["price"]
        let tags: [String]? = saved["tags"]
        let when: Date? = saved["when"]
        #expect(title == "Lamp" && count == 3 && price == 9.5)
        #expect(tags == ["desk", "light"])
        #expect(when == Date(timeIntervalSince1970: 1_700_000_000))
        let wrongType: Int? = saved["title"]
        let missing: String? = saved["nothing"]
        #expect(wrongType == nil && missing == nil)
        #expect(saved["count"] as? Int == 3)                       // the cast form still works
        let wide: Int64? = saved["count"]                          // other number types, as NSNumber reads them
        let real: Double? = saved["count"]
        let whole: Int? = saved["price"]
        #expect(wide == 3 && real == 3.0 && whole == nil)
        let done: Bool? = saved["done"]                            // kept as INT64 1, read as Bool
        let flags: [Bool]? = saved["flags"]
        #expect(done == true && flags == [true, false])

        // Written through the generic subscript and read back from the store.
        let typed: String? = "Floor lamp"
        saved["title"] = typed
        let back = try await db.save(saved)
        let newTitle: String? = back["title"]
        #expect(newTitle == "Floor lamp")
        #expect(back.changedKeys().isEmpty)
    }

    /// Older CloudKit code sets Foundation's objects: `NSNumber` (integer, floating-point or
    /// Boolean) and `NSDate` are record values, read back as Swift's numbers and dates.
    @Test func foundationNumbersAndDatesAreRecordValues() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "older"))
        record["count"] = NSNumber(value: 3)
        record["price"] = NSNumber(value: 9.5)
        record["done"] = NSNumber(value: true)
        record.setObject(NSDate(timeIntervalSince1970: 1_700_000_000), forKey: "when")
        record["scores"] = [NSNumber(value: 1), NSNumber(value: 2)]
        let saved = try await db.save(record)
        #expect(saved["count"] as? Int == 3 && saved["price"] as? Double == 9.5 && saved["done"] as? Int == 1)
        #expect(saved["when"] as? Date == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(saved["scores"] as? [Int] == [1, 2])
        let done: Bool? = saved["done"]
        #expect(done == true)
    }

    /// `NSString` and `NSData` are record values too, as in Apple's framework, lists of them
    /// included: they read back as `String` and `Data`.
    @Test func foundationStringsAndDataAreRecordValues() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "objects"))
        record["title"] = NSString(string: "Lamp")
        record.setObject(NSData(data: Data([1, 2, 3])), forKey: "blob")
        record["names"] = [NSString(string: "a"), NSString(string: "b")]
        let saved = try await db.save(record)
        #expect(saved["title"] as? String == "Lamp")
        #expect(saved["blob"] as? Data == Data([1, 2, 3]))
        #expect(saved["names"] as? [String] == ["a", "b"])
        let typed: String? = saved["title"]
        #expect(typed == "Lamp")
    }

    /// An `NSArray` is a record value, as in Apple's framework: a list of its elements, read
    /// back as a Swift array (and as an `NSArray` by a cast). One that mixes types, or holds
    /// what no field holds, is refused at the save (Apple's raises at the assignment).
    @Test func foundationArraysAreRecordValues() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "arrays"))
        record["tags"] = ["desk", "light"] as NSArray
        record.setObject(NSArray(array: [NSNumber(value: 1), NSNumber(value: 2)]), forKey: "scores")
        record["none"] = NSArray()
        let saved = try await db.save(record)
        #expect(saved["tags"] as? [String] == ["desk", "light"])
        #expect(saved["scores"] as? [Int] == [1, 2])
        #expect((saved["tags"] as? NSArray)?.count == 2)
        let none: [String]? = saved["none"]
        #expect(none == [])
        for bad in [["a", NSNumber(value: 1)] as NSArray, [NSDictionary()] as NSArray, [["nested"] as NSArray] as NSArray] {
            let r = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "bad"))
            r["mixed"] = bad
            let refused = await #expect(throws: CKError.self) { _ = try await db.save(r) }
            #expect(refused?.code == .invalidArguments)
        }
    }

    /// Every number type Apple's `CKRecordValueProtocol` takes: integers kept as INT64, `Float`
    /// as DOUBLE, each read back as the type asked for when it holds the value exactly.
    @Test func everyNumberTypeIsARecordValue() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "numbers"))
        record["i8"] = Int8(-8)
        record["i16"] = Int16(-16)
        record["i32"] = Int32(-32)
        record["u8"] = UInt8(8)
        record["u16"] = UInt16(16)
        record["u32"] = UInt32(32)
        record["u"] = UInt(64)
        record["u64"] = UInt64(640)
        record["f"] = Float(0.1)
        record["floats"] = [Float(1.5), Float(2.25)]
        record["bytes"] = [UInt8(1), UInt8(2)]
        let saved = try await db.save(record)
        let i8: Int8? = saved["i8"], i16: Int16? = saved["i16"], i32: Int32? = saved["i32"]
        let u8: UInt8? = saved["u8"], u16: UInt16? = saved["u16"], u32: UInt32? = saved["u32"], u: UInt? = saved["u"], u64: UInt64? = saved["u64"]
        #expect(i8 == -8 && i16 == -16 && i32 == -32 && u8 == 8 && u16 == 16 && u32 == 32 && u == 64 && u64 == 640)
        let f: Float? = saved["f"]
        #expect(f == Float(0.1))
        #expect(saved["i32"] as? Int == -32 && saved["f"] as? Double == Double(Float(0.1)))
        #expect(saved["floats"] as? [Double] == [1.5, 2.25] && saved["bytes"] as? [Int] == [1, 2])
        let tooSmall: UInt8? = saved["i8"], tooWide: Int8? = saved["u64"], notWhole: Int32? = saved["f"]
        #expect(tooSmall == nil && tooWide == nil && notWhole == nil, "read as another type only when it holds the value")
    }
}
