import CloudKit
import CloudStore
import Testing
import TestSupport

/// Code that imports CloudKit alone (no Foundation, no CloudStore) compiles and runs against
/// a local store: Foundation's types come with the module, as with Apple's.
@Suite struct ImportCloudKitTests {
    /// A store of the test's own; code that runs unchanged uses `CKContainer.default()`,
    /// which opens the store at CKFS_STORE as the OS user.
    static func container() throws -> CKContainer {
        let path = TemporaryStores.path("ckfs-cloudkit-")
        return try CKContainer(store: Store.create(at: path), user: "mei")
    }

    /// The conflict merge CloudKit code writes: save, and on `serverRecordChanged` apply the
    /// change to the server's record and save that.
    @Test func aConflictIsMergedIntoTheServerRecord() async throws {
        let db = try Self.container().privateCloudDatabase
        let id = CKRecord.ID(recordName: "counter")
        let first = CKRecord(recordType: "Counter", recordID: id)
        first["count"] = 1
        first["updated"] = Date(timeIntervalSince1970: 1_800_000_000)
        let base = try await db.save(first)

        let other = try await db.record(for: id)          // another device's copy
        other["count"] = 5
        _ = try await db.save(other)

        base["count"] = 2                                  // this device's stale copy
        var merged: CKRecord?
        do {
            _ = try await db.save(base)
            Issue.record("a save of a stale version was accepted")
        } catch let error as CKError where error.code == .serverRecordChanged {
            let server = try #require(error.serverRecord)
            let theirs = server["count"] as? Int ?? 0
            server["count"] = theirs + 1                   // the merge: both increments count
            merged = try await db.save(server)
        }
        #expect(merged?["count"] as? Int == 6)
        let stored = try await db.record(for: id)
        #expect(stored["count"] as? Int == 6)
        #expect(stored["updated"] as? Date == Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// Error classification by code, as retry logic does it.
    @Test func errorsAreClassifiedByCode() async throws {
        let db = try Self.container().privateCloudDatabase
        do {
            _ = try await db.record(for: CKRecord.ID(recordName: "missing"))
            Issue.record("a missing record was found")
        } catch let error as CKError {
            switch error.code {
            case .unknownItem: break
            default: Issue.record("expected unknownItem, got \(error.code)")
            }
        }
        let data = Data("bytes".utf8)                      // Foundation, through `import CloudKit`
        let record = CKRecord(recordType: "Blob", recordID: CKRecord.ID(recordName: "b"))
        record["payload"] = data
        let saved = try await db.save(record)
        #expect(saved["payload"] as? Data == data)
    }
}
