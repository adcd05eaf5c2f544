import CloudKit
import Testing
import TestSupport

/// CloudKit operations as Foundation operations, with `import CloudKit` alone: on a queue of
/// the app's own with dependencies, configured, subclassed, cancelled.
@Suite struct CKOperationTests {
    /// A save, then a fetch that depends on it, on the app's own `OperationQueue`: the fetch
    /// sees the save, each completion block runs once, and the queue waits for both.
    @Test func operationsRunOnTheAppsOwnQueueAfterTheirDependencies() throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "first"))
        note["text"] = "saved before the fetch"
        let save = CKModifyRecordsOperation(recordsToSave: [note], recordIDsToDelete: nil)
        save.database = db
        save.qualityOfService = .userInitiated
        let fetch = CKFetchRecordsOperation(recordIDs: [note.recordID])
        fetch.database = db
        fetch.addDependency(save)
        let events = LockedList<String>()
        save.modifyRecordsCompletionBlock = { saved, _, error in events.append("saved \(saved?.count ?? -1) \(error == nil)") }
        fetch.fetchRecordsCompletionBlock = { found, error in
            events.append("fetched \(found?[note.recordID]?["text"] as? String ?? "nothing") \(error == nil)")
        }
        let queue = OperationQueue()
        queue.addOperations([fetch, save], waitUntilFinished: true)   // the dependency orders them
        #expect(events.items == ["saved 1 true", "fetched saved before the fetch true"])
        #expect(save.isFinished && fetch.isFinished)
        #expect(save.qualityOfService == .userInitiated)
    }

    /// With no database set, an operation works on its configuration's container's private
    /// database, as Apple's does.
    @Test func theConfigurationsContainerIsUsedWithoutADatabase() async throws {
        let container = try ImportCloudKitTests.container()
        _ = try await container.privateCloudDatabase.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "there")))
        let fetch = CKFetchRecordsOperation(recordIDs: [CKRecord.ID(recordName: "there")])
        let configuration = CKOperation.Configuration()
        configuration.container = container
        configuration.timeoutIntervalForRequest = 10
        fetch.configuration = configuration
        let found = LockedList<String>()
        fetch.fetchRecordsCompletionBlock = { records, _ in found.append(records?.keys.map(\.recordName).joined() ?? "none") }
        fetch.start()
        #expect(found.items == ["there"])
        #expect(fetch.configuration.timeoutIntervalForRequest == 10)
        #expect(!fetch.operationID.isEmpty)
    }

    /// A cancelled operation still calls its blocks, with `operationCancelled`, and saves nothing.
    @Test(.timeLimit(hangLimit)) func aCancelledOperationReportsOperationCancelled() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let capturedError = LockedList<(any Error)?>()
        let op = CKModifyRecordsOperation(recordsToSave: [CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "never"))],
                                          recordIDsToDelete: nil)
        op.cancel()
        let whole = LockedList<String>()
        op.modifyRecordsResultBlock = { result in
            if case .failure(let e) = result { whole.append((e as? CKError)?.code.name ?? "?") } else { whole.append("success") }
        }
        let error: Error? = await withCheckedContinuation { c in
            op.completionBlock = { c.resume(returning: whole.items.isEmpty ? nil : capturedError.items.first ?? nil) }
            op.modifyRecordsCompletionBlock = { _, _, error in capturedError.append(error) }
            db.add(op)
        }
        #expect(whole.items == ["operationCancelled"])
        #expect(op.isFinished)
        let code = (error as? CKError)?.code
        #expect(code == .operationCancelled || ((error as? CKError)?.partialErrorsByItemID?.values.first as? CKError)?.code == .operationCancelled,
                "\(String(describing: error))")
        var missing: CKError?
        do { _ = try await db.record(for: CKRecord.ID(recordName: "never")) } catch let e as CKError { missing = e }
        #expect(missing?.code == .unknownItem)

        // A cancelled fetch ends with operationCancelled in its result block too.
        let fetch = CKFetchRecordsOperation(recordIDs: [CKRecord.ID(recordName: "never")])
        fetch.cancel()
        let result: Result<Void, any Error> = await withCheckedContinuation { c in
            fetch.fetchRecordsResultBlock = { c.resume(returning: $0) }
            db.add(fetch)
        }
        if case .failure(let e) = result { #expect((e as? CKError)?.code == .operationCancelled) } else { Issue.record("a cancelled fetch succeeded") }
    }

    /// Operation classes are open: an app's subclass adds to `main()` and still runs.
    @Test func operationClassesCanBeSubclassed() throws {
        final class CountingFetch: CKFetchRecordsOperation, @unchecked Sendable {
            let runs = LockedList<Int>()
            override func main() {
                runs.append(1)
                super.main()
            }
        }
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let op = CountingFetch(recordIDs: [CKRecord.ID(recordName: "absent")])
        op.database = db
        let errors = LockedList<CKError.Code?>()
        op.fetchRecordsCompletionBlock = { _, error in errors.append((error as? CKError)?.code) }
        let queue = OperationQueue()
        queue.addOperation(op)
        queue.waitUntilAllOperationsAreFinished()
        #expect(op.runs.items == [1])
        #expect(errors.items == [.partialFailure])
    }

    /// The result blocks of current CloudKit code: each record's outcome in its own block, and
    /// a whole-operation result that fails only when the whole operation did.
    @Test(.timeLimit(hangLimit)) func resultBlocksReportEachRecordAndTheWhole() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let kept = try await db.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "kept")))
        let stale = CKRecord(recordType: "Note", recordID: kept.recordID)          // no change tag: a conflict
        let fresh = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "fresh"))
        let modify = CKModifyRecordsOperation(recordsToSave: [fresh, stale], recordIDsToDelete: nil)
        modify.isAtomic = false
        let outcomes = LockedList<String>()
        modify.perRecordSaveBlock = { id, result in
            switch result {
            case .success(let record): outcomes.append("\(id.recordName) saved \(record.recordChangeTag != nil)")
            case .failure(let error): outcomes.append("\(id.recordName) \((error as? CKError)?.code.name ?? "?")")
            }
        }
        let whole: Result<Void, any Error> = await withCheckedContinuation { c in
            modify.modifyRecordsResultBlock = { c.resume(returning: $0) }
            db.add(modify)
        }
        #expect((try? whole.get()) != nil)
        #expect(outcomes.items.sorted() == ["fresh saved true", "kept serverRecordChanged"])

        let fetch = CKFetchRecordsOperation(recordIDs: [fresh.recordID, CKRecord.ID(recordName: "absent")])
        let fetched = LockedList<String>()
        fetch.perRecordResultBlock = { id, result in
            switch result {
            case .success: fetched.append("\(id.recordName) found")
            case .failure(let error): fetched.append("\(id.recordName) \((error as? CKError)?.code == .unknownItem ? "missing" : "\(error)")")
            }
        }
        let fetchWhole: Result<Void, any Error> = await withCheckedContinuation { c in
            fetch.fetchRecordsResultBlock = { c.resume(returning: $0) }
            db.add(fetch)
        }
        #expect((try? fetchWhole.get()) != nil)
        #expect(fetched.items.sorted() == ["absent missing", "fresh found"])
    }

    /// An operation in a group, with no configuration of its own, takes the group's.
    @Test func aGroupsDefaultConfigurationReachesItsOperations() async throws {
        let container = try ImportCloudKitTests.container()
        _ = try await container.privateCloudDatabase.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "grouped")))
        let group = CKOperationGroup()
        group.name = "First sync"
        group.quantity = 1
        group.expectedReceiveSize = .kilobytes
        let configuration = CKOperation.Configuration()
        configuration.container = container
        group.defaultConfiguration = configuration
        let fetch = CKFetchRecordsOperation(recordIDs: [CKRecord.ID(recordName: "grouped")])
        fetch.group = group
        let found = LockedList<String>()
        fetch.perRecordResultBlock = { id, result in if (try? result.get()) != nil { found.append(id.recordName) } }
        fetch.start()
        #expect(found.items == ["grouped"])
        #expect(fetch.configuration.container === container)
        #expect(fetch.group?.name == "First sync" && !group.operationGroupID.isEmpty)
    }
}
