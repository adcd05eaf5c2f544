import CloudKit
import CloudStore
import Testing
import TestSupport

/// CloudKit code written before Swift 6, compiled in the Swift 5 language mode as such an app
/// is: a non-Sendable model object mutated from completion handlers and operation blocks,
/// semaphores to wait for them. What Swift 6 would flag stays a warning here, as with Apple's
/// SDK, so the code compiles and runs unchanged.
@Suite struct Swift5ClientTests {
    /// An app's model, a plain class, as older apps have them.
    final class NoteList {
        var titles: [String] = []
        var failures: [String] = []
    }

    @Test func callbackStyleCodeRunsUnchanged() throws {
        let temporary = try TempStore()
        let container = try CKContainer(store: temporary.store, user: "mei")
        let database = container.privateCloudDatabase
        let model = NoteList()
        let done = DispatchSemaphore(value: 0)

        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "first"))
        note["title"] = "Buy milk" as NSString
        database.save(note) { saved, error in
            if let saved = saved, let title = saved["title"] as? String { model.titles.append(title) }
            if let error = error { model.failures.append("\(error)") }
            done.signal()
        }
        done.wait()

        let second = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "second"))
        second["title"] = "Call home"
        let operation = CKModifyRecordsOperation(recordsToSave: [second], recordIDsToDelete: nil)
        operation.perRecordSaveBlock = { _, result in
            if case .success(let record) = result, let title = record["title"] as? String { model.titles.append(title) }
        }
        operation.modifyRecordsResultBlock = { _ in done.signal() }
        database.add(operation)
        done.wait()

        var queried: [String] = []
        let query = CKQuery(recordType: "Note", predicate: NSPredicate(format: "title BEGINSWITH %@", "Call"))
        database.perform(query, inZoneWith: nil) { records, _ in
            queried = (records ?? []).compactMap { $0["title"] as? String }
            done.signal()
        }
        done.wait()

        #expect(model.titles == ["Buy milk", "Call home"] && model.failures.isEmpty)
        #expect(queried == ["Call home"])
    }

    /// Code of before iOS 10 names a zone's owner with an optional (nil: the current user); a
    /// call with a `String` owner, or none, still takes today's form.
    @available(*, deprecated, message: "calls the optional-owner zone ID initializer older apps call")
    @Test func zoneIDsWithAnOptionalOwner() throws {
        let remembered: String? = nil
        let mine = CKRecordZone.ID(zoneName: "Notes", ownerName: remembered)
        #expect(mine == CKRecordZone.ID(zoneName: "Notes", ownerName: CKCurrentUserDefaultName))
        let theirs: String? = "_someone"
        #expect(CKRecordZone.ID(zoneName: "Notes", ownerName: theirs).ownerName == "_someone")
        #expect(CKRecordZone.ID() == CKRecordZone.ID.default)
        #expect(CKRecordZone.ID(zoneName: "Notes").ownerName == CKCurrentUserDefaultName)
    }

    /// A sync of one zone written with the settings of before iOS 12 (`ZoneOptions`), a page
    /// of one record at a time, as such an app still runs.
    @available(*, deprecated, message: "uses the zone options older apps use, which Apple deprecates")
    @Test func zoneChangesWithTheOlderZoneOptions() throws {
        let temporary = try TempStore()
        let database = try CKContainer(store: temporary.store, user: "mei").privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Notes", ownerName: CKCurrentUserDefaultName)
        let done = DispatchSemaphore(value: 0)
        database.save(CKRecordZone(zoneID: zoneID)) { _, _ in done.signal() }
        done.wait()
        for name in ["a", "b", "c"] {
            database.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: name, zoneID: zoneID))) { _, _ in done.signal() }
            done.wait()
        }

        let options = CKFetchRecordZoneChangesOperation.ZoneOptions()
        options.resultsLimit = 1
        options.desiredKeys = ["title"]
        let operation = CKFetchRecordZoneChangesOperation(recordZoneIDs: [zoneID], optionsByRecordZoneID: [zoneID: options])
        #expect(operation.configurationsByRecordZoneID?[zoneID]?.resultsLimit == 1)
        #expect(operation.optionsByRecordZoneID?[zoneID]?.desiredKeys == ["title"])
        var names: [String] = []
        var pages = 0
        operation.recordChangedBlock = { record in names.append(record.recordID.recordName) }
        operation.recordZoneChangeTokensUpdatedBlock = { _, _, _ in pages += 1 }
        operation.fetchRecordZoneChangesCompletionBlock = { _ in done.signal() }
        database.add(operation)
        done.wait()
        #expect(names.sorted() == ["a", "b", "c"] && pages >= 2, "one record a page: \(pages) pages")
    }
}
