import Foundation
import CloudStore
import Synchronization

/// A container as CloudKit code uses it: its identifier, its two databases, the caller's
/// account and permissions, and a queue that runs operations. An `NSObject`, as Apple's.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s of `Sendable` types.
open class CKContainer: NSObject, @unchecked Sendable {
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
                            prompt: @escaping @Sendable (String) -> Bool? = Container.terminalPrompt) throws(CKError) {
        let caller = user.map { Caller(userName: $0, deviceID: deviceID) } ?? Caller.osUser(deviceID: deviceID)
        try self.init(store: store, identifier: identifier, caller: caller, environment: environment, prompt: prompt)
    }

    /// The container `identifier` of `store` as `caller` (for example ``Caller/noAccount(deviceID:)``).
    public init(store: Store, identifier: String? = nil, caller: Caller, environment: Environment = .development,
                prompt: @escaping @Sendable (String) -> Bool? = Container.terminalPrompt) throws(CKError) {
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
        self.prompt = Container.terminalPrompt
        do throws(CKError) {
            let store = try Self.sharedStore(at: Store.defaultPath)
            let container = try store.container(identifier)
            self.opened = .success(container)
            self.containerIdentifier = container.identifier
        } catch {
            self.opened = .failure(error)
            self.containerIdentifier = identifier ?? StoreSettings().defaultContainer
        }
    }

    /// The stores ``default()`` and ``init(identifier:)`` opened, by path: one a store in a
    /// process, so that code calling `CKContainer.default()` at each use, as CloudKit code does,
    /// reads through one set of zone catalogs and caches instead of opening the store again.
    private static let sharedStores = Mutex<[String: Store]>([:])

    /// The store at `path`, opened once in the process; zones are read from their index files,
    /// keeping the records in use (``ZoneReading/server``), so a zone of a million records costs
    /// neither its size in memory nor a read of every record at the first query.
    private static func sharedStore(at path: String) throws(CKError) -> Store {
        if let open = sharedStores.withLock({ $0[path] }) { return open }
        let opened = try Store.open(at: path, reading: .server)
        return sharedStores.withLock { stores in
            if let raced = stores[path] { return raced }
            stores[path] = opened
            return opened
        }
    }

    /// The default container of the store at ``Store/defaultPath``.
    public static func `default`() -> CKContainer { CKContainer(defaultStoreIdentifier: nil) }

    /// The container `identifier` of the store at ``Store/defaultPath``; an invalid
    /// identifier makes every call fail with `badContainer`. Required, as Apple's is usable as
    /// `Self(identifier:)` in an extension.
    public required convenience init(identifier: String) { self.init(defaultStoreIdentifier: identifier) }

    /// The engine's container.
    func engine() throws(CKError) -> Container { try opened.get() }

    /// Two containers are equal when they are the same container of the same store, for the same
    /// caller and environment: `CKContainer.default()` makes a new object at each call, and
    /// code compares them (and their databases) to tell which one it holds.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKContainer else { return false }
        if other === self { return true }
        return other.containerIdentifier == containerIdentifier && other.caller.userName == caller.userName
            && other.caller.uid == caller.uid && other.environment == environment && other.storeRoot == storeRoot
    }

    open override var hash: Int {
        var h = Hasher()
        h.combine(containerIdentifier)
        h.combine(caller.userName)
        h.combine(storeRoot)
        return h.finalize()
    }

    /// The folder of the store this container is in; nil when it could not be opened.
    private var storeRoot: String? { (try? opened.get())?.store.layout.root }

    public var publicCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .public) }
    public var privateCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .private) }
    /// The zones and records other users share with the caller.
    public var sharedCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .shared) }

    public func database(with scope: CKDatabase.Scope) -> CKDatabase {
        switch scope {
        case .public: publicCloudDatabase
        case .private: privateCloudDatabase
        case .shared: sharedCloudDatabase
        }
    }

    /// Runs an operation in the background, concurrently with others and after its
    /// dependencies; a database operation with no database set works on the private database.
    public func add(_ operation: CKOperation) {
        if let op = operation as? CKDatabaseOperation, op.database == nil { op.database = privateCloudDatabase }
        operation.container = self
        operationQueue.addOperation(operation)
    }

    /// The caller's user record ID in this container; `notAuthenticated` with no account.
    public func userRecordID() throws(CKError) -> CKRecord.ID { try callerRecordID() }

    /// Apple's async form of the caller's user record ID.
    public func userRecordID() async throws -> CKRecord.ID { try callerRecordID() }

    /// The caller's user record ID, for the two forms above and the notifications.
    func callerRecordID() throws(CKError) -> CKRecord.ID {
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

    /// As ``complete(_:_:)``, for the handlers that take a `Result`.
    func completeWithResult<T>(_ handler: @escaping @Sendable (Result<T, any Error>) -> Void, _ work: @escaping @Sendable () throws(CKError) -> T) {
        queue.async {
            do throws(CKError) { handler(.success(try work())) } catch { handler(.failure(error)) }
        }
    }

    // MARK: Configuration

    /// Runs `body` with this container, as Apple's does with a configuration and group applied
    /// to the calls it makes: here every call runs locally, so they change nothing.
    @discardableResult
    public func configuredWith<R>(configuration: CKOperation.Configuration? = nil, group: CKOperationGroup? = nil,
                                  body: (CKContainer) throws -> R) rethrows -> R {
        try body(self)
    }

    @discardableResult
    public func configuredWith<R>(configuration: CKOperation.Configuration? = nil, group: CKOperationGroup? = nil,
                                  body: (CKContainer) async throws -> R) async rethrows -> R {
        try await body(self)
    }

    // MARK: Long-lived operations

    // A process here runs its operations itself and keeps none after it ends, so there are
    // never long-lived operations to find: the lists are empty, and no ID names one.

    public func allLongLivedOperationIDs() async throws -> [CKOperation.ID] {
        _ = try engine()
        return []
    }

    public func longLivedOperation(for operationID: CKOperation.ID) async throws -> CKOperation? {
        _ = try engine()
        return nil
    }

    public func fetchAllLongLivedOperationIDs(completionHandler: @escaping @Sendable ([CKOperation.ID]?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return []
        }
    }

    public func fetchLongLivedOperation(withID operationID: CKOperation.ID, completionHandler: @escaping @Sendable (CKOperation?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) -> CKOperation? in
            _ = try self.engine()
            return nil
        }
    }

    /// Apple's newer names of the application-permission types.
    public enum Application {
        public typealias Permissions = ApplicationPermissions
        public typealias PermissionStatus = ApplicationPermissionStatus
        public typealias PermissionBlock = ApplicationPermissionBlock
    }
}

/// One database of a container, for one caller. An `NSObject`, as Apple's.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s of `Sendable` types.
open class CKDatabase: NSObject, @unchecked Sendable {
    /// Apple's numbers for the databases.
    public enum Scope: Int, Sendable { case `public` = 1, `private` = 2, shared = 3 }

    public let container: CKContainer
    public let databaseScope: Scope
    let scope: DatabaseScope

    init(container: CKContainer, scope: DatabaseScope) {
        self.container = container
        self.scope = scope
        switch scope {
        case .public: databaseScope = .public
        case .private: databaseScope = .private
        case .shared: databaseScope = .shared
        }
    }

    /// Two databases are equal when they are the same scope of equal containers: each access of
    /// `privateCloudDatabase` makes a new object, and code asks "is this the shared database?"
    /// with `==`.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKDatabase else { return false }
        return other === self || (other.databaseScope == databaseScope && other.container.isEqual(container))
    }

    open override var hash: Int { container.hash &* 31 &+ databaseScope.rawValue }

    /// The engine's database (opened on each use: cheap, and it sees new zones). In the
    /// shared database, that of the zones' owner: see ``engine(zone:)``.
    public func engine() throws(CKError) -> Database {
        guard scope != .shared else {
            throw .invalid("the shared database holds zones of several owners: name the zone, with its owner's name (CKRecordZone.ID(zoneName:ownerName:))")
        }
        return try container.engine().database(scope, caller: container.caller, environment: container.environment)
    }

    /// The engine's database holding `zone`: in the shared database its owner's zones as the
    /// caller reaches them through shares.
    public func engine(zone: CKRecordZone.ID) throws(CKError) -> Database {
        guard scope == .shared else { return try engine() }
        return try shared().database(owner: zone.ownerName)
    }

    /// The caller's shared database in the engine.
    public func shared() throws(CKError) -> SharedDatabase {
        try container.engine().sharedDatabase(caller: container.caller, environment: container.environment)
    }

    /// The zones of this database: in the shared database those shared with the caller.
    func zones() throws(CKError) -> [CKRecordZone] {
        scope == .shared ? try shared().zones(includingShare: true).map { CKRecordZone($0, as: CKRecordZone.ID($0.zoneID)) }
            : try engine().zones(includingShare: true).map { CKRecordZone($0) }
    }

    /// A zone's ID as CloudKit code sees it: owned by `CKCurrentUserDefaultName` in the caller's
    /// own databases, by its owner's user record name in the shared database.
    func presented(_ zone: ZoneID) -> CKRecordZone.ID {
        CKRecordZone.ID(scope == .shared ? zone : zone.asCallerWritesIt)
    }

    /// The zones that changed since `token`, of any owner in the shared database.
    func databaseChanges(since token: DatabaseChangeToken?, limit: Int?) throws(CKError) -> DatabaseChanges {
        scope == .shared ? try shared().databaseChanges(since: token, limit: limit) : try engine().databaseChanges(since: token, limit: limit)
    }

    /// Where this database's subscriptions are kept: in the shared database, the caller's own.
    func subscriptionEngine() throws(CKError) -> Database {
        scope == .shared ? try shared().subscriptions : try engine()
    }

    /// What saves and fetches records of this database, of any owner.
    func records() throws(CKError) -> any RecordAccess {
        scope == .shared ? try shared() : try engine()
    }

    /// The engine's record as CloudKit code sees it: its zone owned by `CKCurrentUserDefaultName`,
    /// so that it has the ID the caller wrote (`saved.recordID == record.recordID`); in the
    /// shared database, by its owner's user record name.
    func wrap(_ record: Record, _ db: any RecordAccess) -> CKRecord {
        let out = CKRecord.presented(record, assetDirectory: db.assetDirectory(of: record), keepingOwner: db.namesOwners)
        if let share = out as? CKShare {
            share.currentUserRecordName = db.userRecordName
            share.containerIdentifier = db.containerIdentifier
        }
        return out
    }

    /// Runs an operation in the background on the container's queue.
    public func add(_ operation: CKDatabaseOperation) {
        operation.database = self
        container.add(operation)
    }

    // MARK: async

    public func save(_ record: CKRecord) async throws -> CKRecord {
        let db = try records()
        do throws(CKError) { return wrap(try db.saveRecord(record.record), db) } catch { throw error.presented(by: self, db) }
    }

    public func record(for recordID: CKRecord.ID) async throws -> CKRecord {
        let db = try records()
        return wrap(try db.record(for: recordID.engine), db)
    }

    public func records(for ids: [CKRecord.ID], desiredKeys: [String]? = nil) async throws -> [CKRecord.ID: Result<CKRecord, Error>] {
        let db = try records()
        var out: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, (_, r)) in zip(ids, db.fetch(ids.map(\.engine), desiredKeys: desiredKeys)) {
            out[id] = r.map { wrap($0, db) }.mapError { $0 }
        }
        return out
    }

    @discardableResult
    public func deleteRecord(withID id: CKRecord.ID) async throws -> CKRecord.ID {
        _ = try records().modify(saving: [], deleting: [id.engine], options: ModifyOptions()).deleteResults[0].1.get()
        return id
    }

    public func modifyRecords(saving: [CKRecord], deleting: [CKRecord.ID],
                              savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged,
                              atomically: Bool = true)
        async throws -> (saveResults: [CKRecord.ID: Result<CKRecord, Error>], deleteResults: [CKRecord.ID: Result<Void, Error>]) {
        let db = try records()
        let result = try db.modify(saving: saving.map(\.record), deleting: deleting.map(\.engine),
                                   options: ModifyOptions(savePolicy: savePolicy, atomic: atomically))
        let callerIDs = CallerIDs(saving.map(\.recordID) + deleting)
        var saves: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, r) in result.saveResults { saves[callerIDs[id]] = r.map { wrap($0, db) }.mapError { $0.presented(by: self, db) } }
        var deletes: [CKRecord.ID: Result<Void, Error>] = [:]
        for (id, r) in result.deleteResults { deletes[callerIDs[id]] = r.mapError { $0 } }
        return (saves, deletes)
    }

    // MARK: completion handlers

    public func save(_ record: CKRecord, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            let db = try self.records()
            do throws(CKError) { return self.wrap(try db.saveRecord(record.record), db) } catch { throw error.presented(by: self, db) }
        }
    }

    public func fetch(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            let db = try self.records()
            return self.wrap(try db.record(for: id.engine), db)
        }
    }

    public func delete(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord.ID?, Error?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            _ = try self.records().modify(saving: [], deleting: [id.engine], options: ModifyOptions()).deleteResults[0].1.get()
            return id
        }
    }
}
