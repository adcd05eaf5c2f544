import CloudKit
import CloudStore
import Testing
import TestSupport

/// A `Date` saved in a record comes back equal, as on Apple's platforms (CloudKit's client
/// keeps a date whole; ckfs's files keep the fraction of a millisecond past Web Services'
/// milliseconds): code that saves `Date()` and compares what it fetches with `==` works, in
/// another process too, and so does a query for that very date.
@Suite struct ExactDateTests {
    @Test func aSavedDateIsFetchedEqualByAnotherProcess() async throws {
        let path = TemporaryStores.path("ckfs-cloudkit-")
        let db = try CKContainer(store: Store.create(at: path), user: "mei").privateCloudDatabase
        let now = Date()
        let dates = [now, now.addingTimeInterval(0.000_000_5), Date(timeIntervalSince1970: 1_700_000_000.000_123_4),
                     Date(timeIntervalSinceReferenceDate: -1_000_000_000.987_654_321), Date(timeIntervalSince1970: 1_700_000_000)]
        for (i, date) in dates.enumerated() {
            let record = CKRecord(recordType: "Contact", recordID: CKRecord.ID(recordName: "c\(i)"))
            record["userModificationDate"] = date
            record["history"] = [date, date.addingTimeInterval(-60)]
            let saved = try await db.save(record)
            #expect(saved["userModificationDate"] as? Date == date)
        }

        // Another opening of the store reads the records from their files, as another process would.
        let other = try CKContainer(store: Store.open(at: path), user: "mei").privateCloudDatabase
        for (i, date) in dates.enumerated() {
            let fetched = try await other.record(for: CKRecord.ID(recordName: "c\(i)"))
            let when: Date? = fetched["userModificationDate"]
            let history: [Date]? = fetched["history"]
            #expect(when == date, "c\(i): \(when?.timeIntervalSinceReferenceDate ?? .nan) != \(date.timeIntervalSinceReferenceDate)")
            #expect(history == [date, date.addingTimeInterval(-60)], "c\(i)")
        }

        // The date itself finds its record, and only it, though c1 is within a microsecond.
        let query = CKQuery(recordType: "Contact", predicate: NSPredicate(format: "userModificationDate == %@", now as NSDate))
        let (matches, _) = try await other.records(matching: query)
        #expect(matches.map(\.0.recordName) == ["c0"])
        let later = CKQuery(recordType: "Contact", predicate: NSPredicate(format: "userModificationDate > %@", now as NSDate))
        let (after, _) = try await other.records(matching: later)
        #expect(after.map(\.0.recordName) == ["c1"])
    }
}
