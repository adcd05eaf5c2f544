import Foundation
import CloudStore

/// The base of every operation, a Foundation `Operation` as Apple's is: add it to a
/// container or database (``CKContainer/add(_:)``, ``CKDatabase/add(_:)``), to an
/// `OperationQueue` of your own, or call `start()`; dependencies, `completionBlock`,
/// `qualityOfService` and `cancel()` work as for any operation. Its blocks run on the thread
/// that runs the operation.
///
/// Set the blocks and inputs before the operation starts; `lock` guards what changes after.
open class CKOperation: Operation, @unchecked Sendable {
    /// The settings of an operation. A local store uses `container`; the rest (cellular access,
    /// time-outs, long-lived operations) are kept as set and change nothing, there being no
    /// network. An `NSObject`, as Apple's, and `open`, as Apple's.
    /// `@unchecked Sendable`: its values are in a `LockedSettings`; `open`, so the compiler
    /// cannot check subclasses.
    open class Configuration: NSObject, @unchecked Sendable {
        private struct Values {
            var container: CKContainer?
            var qualityOfService = QualityOfService.default
            var allowsCellularAccess = true
            var isLongLived = false
            var timeoutIntervalForRequest: TimeInterval = 60
            var timeoutIntervalForResource: TimeInterval = 7 * 24 * 3600
        }

        private let values: LockedSettings<Values>

        public override init() { values = LockedSettings(Values()) }

        /// A configuration with the same settings, as an operation keeps of one given to it.
        func copied() -> Configuration {
            let copy = Configuration()
            copy.values[\.self] = values.all
            return copy
        }

        public var container: CKContainer? { get { values[\.container] } set { values[\.container] = newValue } }
        public var qualityOfService: QualityOfService { get { values[\.qualityOfService] } set { values[\.qualityOfService] = newValue } }
        public var allowsCellularAccess: Bool { get { values[\.allowsCellularAccess] } set { values[\.allowsCellularAccess] = newValue } }
        public var isLongLived: Bool { get { values[\.isLongLived] } set { values[\.isLongLived] = newValue } }
        public var timeoutIntervalForRequest: TimeInterval {
            get { values[\.timeoutIntervalForRequest] }
            set { values[\.timeoutIntervalForRequest] = newValue }
        }
        public var timeoutIntervalForResource: TimeInterval {
            get { values[\.timeoutIntervalForResource] }
            set { values[\.timeoutIntervalForResource] = newValue }
        }
    }

    public typealias ID = String

    /// Guards `storedConfiguration`, `storedGroup` and `state` here, and the running state of
    /// subclasses.
    let lock = NSLock()
    private var storedConfiguration: Configuration?
    private var storedGroup: CKOperationGroup?

    /// Names this operation, as Apple's identifies long-lived ones.
    public let operationID: ID = UUID().uuidString

    /// Called when a long-lived operation is persisted; a local store never calls it.
    public var longLivedOperationWasPersistedBlock: (() -> Void)?

    public override init() { super.init() }

    /// Guarded by `lock`: where the operation is, as `isExecuting` and `isFinished` say.
    private var state = (executing: false, finished: false)

    open override var isExecuting: Bool { lock.withLock { state.executing } }
    open override var isFinished: Bool { lock.withLock { state.finished } }

    /// Runs `main()` once, then finishes. A cancelled operation runs `main()` too, which gives
    /// each item and the whole `operationCancelled`: CloudKit calls the blocks of a cancelled
    /// operation. (Foundation's `start()` skips `main()` when cancelled, so it is not used.)
    open override func start() {
        willChangeValue(forKey: "isExecuting")
        let first = lock.withLock { () -> Bool in
            guard !state.executing && !state.finished else { return false }
            state.executing = true
            return true
        }
        didChangeValue(forKey: "isExecuting")
        guard first else { return }
        main()
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock { state = (executing: false, finished: true) }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }

    /// The operation's own copy of the configuration given (Apple's property copies too), so
    /// operations given one configuration do not change each other's; without one given, a
    /// copy of the group's default configuration, else settings of its own.
    public var configuration: Configuration! {
        get {
            lock.withLock {
                if let stored = storedConfiguration { return stored }
                let made = storedGroup?.defaultConfiguration.copied() ?? Configuration()
                storedConfiguration = made
                return made
            }
        }
        set {
            let copy = newValue?.copied() ?? Configuration()
            lock.withLock { storedConfiguration = copy }
        }
    }

    /// The group of operations this one belongs to.
    public var group: CKOperationGroup? {
        get { lock.withLock { storedGroup } }
        set { lock.withLock { storedGroup = newValue } }
    }

    /// The container the operation works in: set by `add(_:)`, else the configuration's,
    /// else `CKContainer.default()` when it runs.
    public var container: CKContainer? {
        get { configuration.container }
        set { configuration.container = newValue }
    }

    public var isLongLived: Bool {
        get { configuration.isLongLived }
        set { configuration.isLongLived = newValue }
    }

    public var allowsCellularAccess: Bool {
        get { configuration.allowsCellularAccess }
        set { configuration.allowsCellularAccess = newValue }
    }

    /// Apple's older place for the configuration's time-outs.
    public var timeoutIntervalForRequest: TimeInterval {
        get { configuration.timeoutIntervalForRequest }
        set { configuration.timeoutIntervalForRequest = newValue }
    }

    public var timeoutIntervalForResource: TimeInterval {
        get { configuration.timeoutIntervalForResource }
        set { configuration.timeoutIntervalForResource = newValue }
    }
}

/// An operation on one database; with none set, it works on its container's private
/// database, as Apple's does.
open class CKDatabaseOperation: CKOperation, @unchecked Sendable {
    /// Guarded by `lock`.
    private var storedDatabase: CKDatabase?

    /// The database the operation works on: set it, or let ``CKDatabase/add(_:)`` set it.
    public var database: CKDatabase? {
        get { lock.withLock { storedDatabase } }
        set { lock.withLock { storedDatabase = newValue } }
    }

    /// The database to run on: the one set, else the private database of the container.
    var targetDatabase: CKDatabase { database ?? (container ?? CKContainer.default()).privateCloudDatabase }
}

/// Saves and deletes records in one operation.
open class CKModifyRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    public typealias RecordSavePolicy = SavePolicy

    public var recordsToSave: [CKRecord]?
    public var recordIDsToDelete: [CKRecord.ID]?
    public var savePolicy: RecordSavePolicy = .ifServerRecordUnchanged
    public var isAtomic = true
    public var clientChangeTokenData: Data?
    public var perRecordProgressBlock: ((CKRecord, Double) -> Void)?
    public var perRecordCompletionBlock: ((CKRecord, Error?) -> Void)?
    public var perRecordSaveBlock: ((CKRecord.ID, Result<CKRecord, Error>) -> Void)?
    public var perRecordDeleteBlock: ((CKRecord.ID, Result<Void, Error>) -> Void)?
    /// The older form of ``modifyRecordsResultBlock``: the saved records, the deleted IDs, and
    /// a `partialFailure` naming each record that failed.
    public var modifyRecordsCompletionBlock: (([CKRecord]?, [CKRecord.ID]?, Error?) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed; each record's
    /// own error went to ``perRecordSaveBlock`` or ``perRecordDeleteBlock``.
    public var modifyRecordsResultBlock: ((Result<Void, Error>) -> Void)?

    public init(recordsToSave: [CKRecord]? = nil, recordIDsToDelete: [CKRecord.ID]? = nil) {
        self.recordsToSave = recordsToSave
        self.recordIDsToDelete = recordIDsToDelete
    }

    open override func main() {
        let toSave = recordsToSave ?? []
        do throws(CKError) {
            let database = targetDatabase
            let db = try database.records()
            var byID: [RecordID: CKRecord] = [:]
            for r in toSave { byID[db.normalized(r.recordID.engine)] = r }
            let result = try db.modify(
                saving: toSave.map(\.record), deleting: (recordIDsToDelete ?? []).map(\.engine),
                options: ModifyOptions(savePolicy: savePolicy, atomic: isAtomic, clientChangeToken: clientChangeTokenData),
                progress: { id, p in if let r = byID[id] { self.perRecordProgressBlock?(r, p) } },
                isCancelled: { self.isCancelled })
            let callerIDs = CallerIDs(toSave.map(\.recordID) + (recordIDsToDelete ?? []))
            var saved: [CKRecord] = []
            for (engineID, r) in result.saveResults {
                let id = callerIDs[engineID]
                switch r {
                case .success(let record):
                    let out = database.wrap(record, db)
                    saved.append(out)
                    perRecordCompletionBlock?(out, nil)
                    perRecordSaveBlock?(id, .success(out))
                case .failure(let e):
                    let shown = e.presented(by: database, db)
                    perRecordCompletionBlock?(byID[engineID] ?? CKRecord(recordType: "", recordID: id), shown)
                    perRecordSaveBlock?(id, .failure(shown))
                }
            }
            for (id, r) in result.deleteResults { perRecordDeleteBlock?(callerIDs[id], r.mapError { $0 }) }
            let error = result.error?.keyed(by: callerIDs).presented(by: database, db)
            modifyRecordsCompletionBlock?(saved, result.deletedRecordIDs.map { callerIDs[$0] }, error)
            if isCancelled {
                modifyRecordsResultBlock?(.failure(CKError(.operationCancelled, "the operation was cancelled")))
            } else {
                modifyRecordsResultBlock?(error.map { $0.code == .partialFailure ? .success(()) : .failure($0) } ?? .success(()))
            }
        } catch {
            modifyRecordsCompletionBlock?(nil, nil, error)
            modifyRecordsResultBlock?(.failure(error))
        }
    }
}

/// Fetches records by ID.
open class CKFetchRecordsOperation: CKDatabaseOperation, @unchecked Sendable {
    public var recordIDs: [CKRecord.ID]?
    public var desiredKeys: [String]?
    /// How far each record's download has come: here each is read whole at once (1.0), before
    /// its result.
    public var perRecordProgressBlock: ((CKRecord.ID, Double) -> Void)?
    /// The older form of ``perRecordResultBlock``.
    public var perRecordCompletionBlock: ((CKRecord?, CKRecord.ID?, Error?) -> Void)?
    /// Each record, or why it could not be fetched, by the ID asked for.
    public var perRecordResultBlock: ((CKRecord.ID, Result<CKRecord, Error>) -> Void)?
    /// The older form of ``fetchRecordsResultBlock``: the records found, and a
    /// `partialFailure` naming each one that was not.
    public var fetchRecordsCompletionBlock: (([CKRecord.ID: CKRecord]?, Error?) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchRecordsResultBlock: ((Result<Void, Error>) -> Void)?

    /// Set by ``fetchCurrentUserRecordOperation()``: the caller's user record is fetched.
    private var fetchesCurrentUser = false

    public required init(recordIDs: [CKRecord.ID]? = nil) { self.recordIDs = recordIDs }

    /// Fetches the caller's user record (type `Users`, in the public database), as Apple's.
    public class func fetchCurrentUserRecordOperation() -> Self {
        let operation = Self(recordIDs: nil)
        operation.fetchesCurrentUser = true
        return operation
    }

    open override func main() {
        do throws(CKError) {
            var database = targetDatabase
            if fetchesCurrentUser {
                // User records live in the public database; the ID is known once the operation runs.
                database = database.container.publicCloudDatabase
                recordIDs = [try database.container.userRecordID()]
            }
            let db = try database.records()
            var found: [CKRecord.ID: CKRecord] = [:]
            var errors: [CKItemID: CKError] = [:]
            let ids = recordIDs ?? []
            // Results by the IDs the caller wrote, in the same order as the engine's.
            for (id, (_, r)) in zip(ids, db.fetch(ids.map(\.engine), desiredKeys: desiredKeys)) {
                if isCancelled {
                    let cancelled = CKError(.operationCancelled, "the operation was cancelled")
                    errors[.record(id.engine)] = cancelled
                    perRecordCompletionBlock?(nil, id, cancelled)
                    perRecordResultBlock?(id, .failure(cancelled))
                    continue
                }
                switch r {
                case .success(let record):
                    let out = database.wrap(record, db)
                    found[id] = out
                    perRecordProgressBlock?(id, 1.0)
                    perRecordCompletionBlock?(out, id, nil)
                    perRecordResultBlock?(id, .success(out))
                case .failure(let e):
                    errors[.record(id.engine)] = e
                    perRecordCompletionBlock?(nil, id, e)
                    perRecordResultBlock?(id, .failure(e))
                }
            }
            fetchRecordsCompletionBlock?(found, CKError.partialFailure(errors, "\(errors.count) of \(recordIDs?.count ?? 0) records could not be fetched"))
            fetchRecordsResultBlock?(isCancelled ? .failure(CKError(.operationCancelled, "the operation was cancelled")) : .success(()))
        } catch {
            fetchRecordsCompletionBlock?(nil, error)
            fetchRecordsResultBlock?(.failure(error))
        }
    }
}
