import Foundation

/// The base of every operation: run by ``CKContainer/add(_:)`` or ``CKDatabase/add(_:)`` on
/// the container's concurrent queue, with completion blocks that may run on any thread.
///
/// Set the blocks and inputs before adding the operation; `lock` guards what changes after.
open class CKOperation: @unchecked Sendable {
    let lock = NSLock()
    /// Guarded by `lock`.
    private var cancelled = false
    private var finished = false
    private var storedContainer: CKContainer?

    /// Called once when the operation is done, after its own completion block.
    public var completionBlock: (@Sendable () -> Void)?

    public init() {}

    public var isCancelled: Bool { lock.withLock { cancelled } }
    public var isFinished: Bool { lock.withLock { finished } }

    /// Stops the operation: what it had not committed yet is not applied.
    public func cancel() { lock.withLock { cancelled = true } }

    /// The container the operation was added to (or whose database it was added to).
    var container: CKContainer? {
        get { lock.withLock { storedContainer } }
        set { lock.withLock { storedContainer = newValue } }
    }

    func start() {
        main()
        lock.withLock { finished = true }
        completionBlock?()
    }

    func main() {}
}

/// An operation on one database; added to a container, it works on the private database.
open class CKDatabaseOperation: CKOperation, @unchecked Sendable {
    /// Set when added; guarded by `lock`.
    private var storedDatabase: CKDatabase?

    /// The database the operation works on: set it, or let ``CKDatabase/add(_:)`` set it.
    public var database: CKDatabase? {
        get { lock.withLock { storedDatabase } }
        set { lock.withLock { storedDatabase = newValue } }
    }
}

/// Saves and deletes records in one operation.
public final class CKModifyRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    public typealias RecordSavePolicy = SavePolicy

    public var recordsToSave: [CKRecord]?
    public var recordIDsToDelete: [CKRecord.ID]?
    public var savePolicy: RecordSavePolicy = .ifServerRecordUnchanged
    public var isAtomic = true
    public var clientChangeTokenData: Data?
    public var perRecordProgressBlock: (@Sendable (CKRecord, Double) -> Void)?
    public var perRecordCompletionBlock: (@Sendable (CKRecord, Error?) -> Void)?
    public var perRecordSaveBlock: (@Sendable (CKRecord.ID, Result<CKRecord, Error>) -> Void)?
    public var perRecordDeleteBlock: (@Sendable (CKRecord.ID, Result<Void, Error>) -> Void)?
    public var modifyRecordsCompletionBlock: (@Sendable ([CKRecord]?, [CKRecord.ID]?, Error?) -> Void)?

    public init(recordsToSave: [CKRecord]? = nil, recordIDsToDelete: [CKRecord.ID]? = nil) {
        self.recordsToSave = recordsToSave
        self.recordIDsToDelete = recordIDsToDelete
    }

    override func main() {
        let toSave = recordsToSave ?? []
        do throws(CKError) {
            guard let database else { throw CKError(.internalError, "the operation was not added to a database") }
            let db = try database.engine()
            var byID: [CKRecord.ID: CKRecord] = [:]
            for r in toSave { byID[db.normalized(r.recordID)] = r }
            let result = try db.modify(
                saving: toSave.map(\.record), deleting: recordIDsToDelete ?? [],
                options: ModifyOptions(savePolicy: savePolicy, atomic: isAtomic, clientChangeToken: clientChangeTokenData),
                progress: { id, p in if let r = byID[id] { self.perRecordProgressBlock?(r, p) } },
                isCancelled: { self.isCancelled })
            // Results by the IDs the caller wrote (the engine names the zone's owner).
            let callerIDs = toSave.map(\.recordID) + (recordIDsToDelete ?? [])
            var saved: [CKRecord] = []
            for (engineID, r) in result.saveResults {
                let id = Self.callerID(engineID, among: callerIDs)
                switch r {
                case .success(let record):
                    let out = database.wrap(record, db)
                    saved.append(out)
                    perRecordCompletionBlock?(out, nil)
                    perRecordSaveBlock?(id, .success(out))
                case .failure(let e):
                    perRecordCompletionBlock?(byID[engineID] ?? CKRecord(recordType: "", recordID: id), e)
                    perRecordSaveBlock?(id, .failure(e))
                }
            }
            for (id, r) in result.deleteResults { perRecordDeleteBlock?(Self.callerID(id, among: callerIDs), r.mapError { $0 }) }
            modifyRecordsCompletionBlock?(saved, result.deletedRecordIDs.map { Self.callerID($0, among: callerIDs) }, result.error?.keyed(by: callerIDs))
        } catch {
            modifyRecordsCompletionBlock?(nil, nil, error)
        }
    }
}

/// Fetches records by ID.
public final class CKFetchRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    public var recordIDs: [CKRecord.ID]?
    public var desiredKeys: [String]?
    public var perRecordCompletionBlock: (@Sendable (CKRecord?, CKRecord.ID?, Error?) -> Void)?
    public var fetchRecordsCompletionBlock: (@Sendable ([CKRecord.ID: CKRecord]?, Error?) -> Void)?

    public init(recordIDs: [CKRecord.ID]? = nil) { self.recordIDs = recordIDs }

    override func main() {
        do throws(CKError) {
            guard let database else { throw CKError(.internalError, "the operation was not added to a database") }
            let db = try database.engine()
            var found: [CKRecord.ID: CKRecord] = [:]
            var errors: [CKItemID: CKError] = [:]
            let ids = recordIDs ?? []
            // Results by the IDs the caller wrote, in the same order as the engine's.
            for (id, (_, r)) in zip(ids, db.fetch(ids, desiredKeys: desiredKeys)) {
                if isCancelled {
                    errors[.record(id)] = CKError(.operationCancelled, "the operation was cancelled")
                    continue
                }
                switch r {
                case .success(let record):
                    let out = database.wrap(record, db)
                    found[id] = out
                    perRecordCompletionBlock?(out, id, nil)
                case .failure(let e):
                    errors[.record(id)] = e
                    perRecordCompletionBlock?(nil, id, e)
                }
            }
            fetchRecordsCompletionBlock?(found, CKError.partialFailure(errors, "\(errors.count) of \(recordIDs?.count ?? 0) records could not be fetched"))
        } catch {
            fetchRecordsCompletionBlock?(nil, error)
        }
    }
}

extension CKDatabaseOperation {
    /// The ID among `ids` that names the same record as `id` (by record and zone name), else `id`.
    static func callerID(_ id: CKRecord.ID, among ids: [CKRecord.ID]) -> CKRecord.ID {
        ids.first { $0.recordName == id.recordName && $0.zoneID.zoneName == id.zoneID.zoneName } ?? id
    }
}
