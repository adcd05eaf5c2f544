import CloudKit
import Testing

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
        let path = NSTemporaryDirectory() + "ckfs-swift5-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: path) }
        let container = try CKContainer(store: Store.create(at: path), user: "mei")
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
}
