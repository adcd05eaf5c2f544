import Foundation

/// A container as CloudKit code uses it: its identifier, its two databases, the caller's
/// account and permissions, and a queue that runs operations.
public final class CKContainer: Sendable {
    public let containerIdentifier: String?
    /// The engine's container, or why it could not be opened (then every call fails with that
    /// error and ``accountStatus()`` is `couldNotDetermine`).
    let opened: Result<Container, CKError>
    public let caller: Caller
    public let environment: Environment
    /// Answers a permission request when there is no decision yet; nil: no answer.
    let prompt: @Sendable (String) -> Bool?
    /// Completion handlers of the convenience calls run their work here, concurrently.
    let queue = DispatchQueue(label: "ckfs.container", attributes: .concurrent)
    /// Operations added to the container or its databases run here, concurrently, each after
    /// its dependencies.
    let operationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "ckfs.container.operations"
        return queue
    }()

    /// The container `identifier` (nil: the store's default) of `store`, as `user` (nil: the OS user).
    public convenience init(store: Store, identifier: String? = nil, user: String? = nil, deviceID: String = Caller.processDeviceID,
                            environment: Environment = .development,
                            prompt: @escaping @Sendable (String) -> Bool? = CKContainer.terminalPrompt) throws(CKError) {
        let caller = user.map { Caller(userName: $0, deviceID: deviceID) } ?? Caller.osUser(deviceID: deviceID)
        try self.init(store: store, identifier: identifier, caller: caller, environment: environment, prompt: prompt)
    }

    /// The container `identifier` of `store` as `caller` (for example ``Caller/noAccount(deviceID:)``).
    public init(store: Store, identifier: String? = nil, caller: Caller, environment: Environment = .development,
                prompt: @escaping @Sendable (String) -> Bool? = CKContainer.terminalPrompt) throws(CKError) {
        let container = try store.container(identifier)
        self.opened = .success(container)
        self.containerIdentifier = container.identifier
        self.caller = caller
        self.environment = environment
        self.prompt = prompt
    }

    /// A container of the store at ``Store/defaultPath`` (`CKFS_STORE`), as the OS user; when
    /// the store cannot be opened, every call fails with the reason.
    private init(defaultStoreIdentifier identifier: String?) {
        self.caller = .osUser()
        self.environment = .development
        self.prompt = CKContainer.terminalPrompt
        do throws(CKError) {
            let store = try Store.open(at: Store.defaultPath)
            let container = try store.container(identifier)
            self.opened = .success(container)
            self.containerIdentifier = container.identifier
        } catch {
            self.opened = .failure(error)
            self.containerIdentifier = identifier ?? StoreSettings().defaultContainer
        }
    }

    /// The default container of the store at ``Store/defaultPath``.
    public static func `default`() -> CKContainer { CKContainer(defaultStoreIdentifier: nil) }

    /// The container `identifier` of the store at ``Store/defaultPath``; an invalid
    /// identifier makes every call fail with `badContainer`.
    public convenience init(identifier: String) { self.init(defaultStoreIdentifier: identifier) }

    /// The engine's container.
    func engine() throws(CKError) -> Container { try opened.get() }

    public var publicCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .public) }
    public var privateCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .private) }

    public func database(with scope: CKDatabase.Scope) -> CKDatabase {
        CKDatabase(container: self, scope: scope == .public ? .public : .private)
    }

    /// Runs an operation in the background, concurrently with others and after its
    /// dependencies; a database operation with no database set works on the private database.
    public func add(_ operation: CKOperation) {
        if let op = operation as? CKDatabaseOperation, op.database == nil { op.database = privateCloudDatabase }
        operation.container = self
        operationQueue.addOperation(operation)
    }

    /// The caller's user record ID in this container; `notAuthenticated` with no account.
    public func userRecordID() throws(CKError) -> CKRecord.ID {
        CKRecord.ID(recordName: try engine().signedIn(caller, for: "a user record ID").userRecordName)
    }

    public func fetchUserRecordID(completionHandler: @escaping @Sendable (CKRecord.ID?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.userRecordID() }
    }

    /// Runs `work` on the container's queue and hands its value, or its error, to `handler`:
    /// the shape of every completion-handler call.
    func complete<T>(_ handler: @escaping @Sendable (T?, Error?) -> Void, _ work: @escaping @Sendable () throws(CKError) -> T?) {
        queue.async {
            do throws(CKError) { handler(try work(), nil) } catch { handler(nil, error) }
        }
    }
}

/// One database of a container, for one caller.
public final class CKDatabase: Sendable {
    /// Apple's numbers for the public and private databases, which ckfs has.
    public enum Scope: Int, Sendable { case `public` = 1, `private` = 2 }

    public let container: CKContainer
    public let databaseScope: Scope
    let scope: DatabaseScope

    init(container: CKContainer, scope: DatabaseScope) {
        self.container = container
        self.scope = scope
        self.databaseScope = scope == .public ? .public : .private
    }

    /// The engine's database (opened on each use: cheap, and it sees new zones).
    public func engine() throws(CKError) -> Database {
        try container.engine().database(scope, caller: container.caller, environment: container.environment)
    }

    /// The engine's record as CloudKit code sees it: its zone owned by `CKCurrentUserDefaultName`,
    /// so that it has the ID the caller wrote (`saved.recordID == record.recordID`).
    func wrap(_ record: Record, _ db: Database) -> CKRecord {
        CKRecord.presented(record, assetDirectory: StoreLayout.assetsDirectory(db.zoneDirectory(record.recordID.zoneID.zoneName)))
    }

    /// Runs an operation in the background on the container's queue.
    public func add(_ operation: CKDatabaseOperation) {
        operation.database = self
        container.add(operation)
    }

    // MARK: async

    public func save(_ record: CKRecord) async throws -> CKRecord {
        let db = try engine()
        return wrap(try db.save(record.record), db)
    }

    public func record(for recordID: CKRecord.ID) async throws -> CKRecord {
        let db = try engine()
        return wrap(try db.record(for: recordID.engine), db)
    }

    public func records(for ids: [CKRecord.ID], desiredKeys: [String]? = nil) async throws -> [CKRecord.ID: Result<CKRecord, Error>] {
        let db = try engine()
        var out: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, (_, r)) in zip(ids, db.fetch(ids.map(\.engine), desiredKeys: desiredKeys)) {
            out[id] = r.map { wrap($0, db) }.mapError { $0 }
        }
        return out
    }

    @discardableResult
    public func deleteRecord(withID id: CKRecord.ID) async throws -> CKRecord.ID {
        try engine().delete(id.engine)
        return id
    }

    public func modifyRecords(saving: [CKRecord], deleting: [CKRecord.ID],
                              savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged,
                              atomically: Bool = true)
        async throws -> (saveResults: [CKRecord.ID: Result<CKRecord, Error>], deleteResults: [CKRecord.ID: Result<Void, Error>]) {
        let db = try engine()
        let result = try db.modify(saving: saving.map(\.record), deleting: deleting.map(\.engine),
                                   options: ModifyOptions(savePolicy: savePolicy, atomic: atomically))
        let callerIDs = CallerIDs(saving.map(\.recordID) + deleting)
        var saves: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, r) in result.saveResults { saves[callerIDs[id]] = r.map { wrap($0, db) }.mapError { $0 } }
        var deletes: [CKRecord.ID: Result<Void, Error>] = [:]
        for (id, r) in result.deleteResults { deletes[callerIDs[id]] = r.mapError { $0 } }
        return (saves, deletes)
    }

    // MARK: completion handlers

    public func save(_ record: CKRecord, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            let db = try self.engine()
            return self.wrap(try db.save(record.record), db)
        }
    }

    public func fetch(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            let db = try self.engine()
            return self.wrap(try db.record(for: id.engine), db)
        }
    }

    public func delete(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord.ID?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            try self.engine().delete(id.engine)
            return id
        }
    }
}
