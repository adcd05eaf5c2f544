import Foundation

/// A container as CloudKit code uses it: its identifier and its two databases (C1, C2, C8).
public final class CKContainer: Sendable {
    public let containerIdentifier: String
    let container: Container
    public let caller: Caller
    public let environment: Environment
    /// Operations added to the container or its databases run here, concurrently (C8).
    let queue = DispatchQueue(label: "ckfs.container", attributes: .concurrent)

    /// The container `identifier` (nil: the store's default) of `store`, as `user` (nil: the OS user).
    public init(store: Store, identifier: String? = nil, user: String? = nil, deviceID: String = Caller.processDeviceID,
                environment: Environment = .development) throws(CKError) {
        self.container = try store.container(identifier)
        self.containerIdentifier = container.identifier
        self.caller = Caller(userName: user ?? Caller.currentOSUserName, deviceID: deviceID)
        self.environment = environment
    }

    public var publicCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .public) }
    public var privateCloudDatabase: CKDatabase { CKDatabase(container: self, scope: .private) }

    public func database(with scope: DatabaseScope) -> CKDatabase { CKDatabase(container: self, scope: scope) }

    /// Runs an operation on the private database in the background.
    public func add(_ operation: CKDatabaseOperation) { privateCloudDatabase.add(operation) }

    /// The caller's user record ID in this container (C3).
    public func userRecordID() throws(CKError) -> CKRecord.ID {
        CKRecord.ID(recordName: try container.userRecordName(for: caller.userName))
    }

    public func fetchUserRecordID(completionHandler: @escaping @Sendable (CKRecord.ID?, Error?) -> Void) {
        queue.async {
            do { completionHandler(try self.userRecordID(), nil) } catch { completionHandler(nil, error) }
        }
    }
}

/// One database of a container, for one caller.
public final class CKDatabase: Sendable {
    public enum Scope: Sendable { case `public`, `private` }

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
        try container.container.database(scope, caller: container.caller, environment: container.environment)
    }

    func wrap(_ record: Record, _ db: Database) -> CKRecord {
        CKRecord(record, assetDirectory: StoreLayout.assetsDirectory(db.zoneDirectory(record.recordID.zoneID.zoneName)))
    }

    /// Runs an operation in the background on the container's queue (C8).
    public func add(_ operation: CKDatabaseOperation) {
        operation.database = self
        container.queue.async { operation.start() }
    }

    // MARK: async

    public func save(_ record: CKRecord) async throws -> CKRecord {
        let db = try engine()
        return wrap(try db.save(record.record), db)
    }

    public func record(for recordID: CKRecord.ID) async throws -> CKRecord {
        let db = try engine()
        return wrap(try db.record(for: recordID), db)
    }

    public func records(for ids: [CKRecord.ID], desiredKeys: [String]? = nil) async throws -> [CKRecord.ID: Result<CKRecord, Error>] {
        let db = try engine()
        var out: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, r) in db.fetch(ids, desiredKeys: desiredKeys) {
            out[id] = r.map { wrap($0, db) }.mapError { $0 }
        }
        return out
    }

    @discardableResult
    public func deleteRecord(withID id: CKRecord.ID) async throws -> CKRecord.ID {
        try engine().delete(id)
        return id
    }

    public func modifyRecords(saving: [CKRecord], deleting: [CKRecord.ID],
                              savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged,
                              atomically: Bool = true)
        async throws -> (saveResults: [CKRecord.ID: Result<CKRecord, Error>], deleteResults: [CKRecord.ID: Result<Void, Error>]) {
        let db = try engine()
        let result = try db.modify(saving: saving.map(\.record), deleting: deleting,
                                   options: ModifyOptions(savePolicy: savePolicy, atomic: atomically))
        var saves: [CKRecord.ID: Result<CKRecord, Error>] = [:]
        for (id, r) in result.saveResults { saves[id] = r.map { wrap($0, db) }.mapError { $0 } }
        var deletes: [CKRecord.ID: Result<Void, Error>] = [:]
        for (id, r) in result.deleteResults { deletes[id] = r.mapError { $0 } }
        return (saves, deletes)
    }

    // MARK: completion handlers

    public func save(_ record: CKRecord, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.queue.async {
            do throws(CKError) {
                let db = try self.engine()
                completionHandler(self.wrap(try db.save(record.record), db), nil)
            } catch { completionHandler(nil, error) }
        }
    }

    public func fetch(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord?, Error?) -> Void) {
        container.queue.async {
            do throws(CKError) {
                let db = try self.engine()
                completionHandler(self.wrap(try db.record(for: id), db), nil)
            } catch { completionHandler(nil, error) }
        }
    }

    public func delete(withRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKRecord.ID?, Error?) -> Void) {
        container.queue.async {
            do throws(CKError) {
                try self.engine().delete(id)
                completionHandler(id, nil)
            } catch { completionHandler(nil, error) }
        }
    }

    // MARK: zones and changes

    @discardableResult
    public func save(_ zone: CKRecordZone) async throws -> CKRecordZone {
        let z = try engine().createZone(zone.zoneID.zoneName)
        var out = CKRecordZone(zoneID: z.zoneID)
        out.capabilities = z.capabilities
        return out
    }

    public func deleteRecordZone(withID id: CKRecordZone.ID) async throws { try engine().deleteZone(id.zoneName) }

    public func allRecordZones() async throws -> [CKRecordZone] {
        try engine().zones().map { z in
            var out = CKRecordZone(zoneID: z.zoneID)
            out.capabilities = z.capabilities
            return out
        }
    }

    /// What changed in a zone since a token (R13); nil fetches everything.
    public func recordZoneChanges(inZoneWith zoneID: CKRecordZone.ID, since token: CKServerChangeToken?)
        async throws -> (modifications: [CKRecord], deletions: [CKRecord.ID], changeToken: CKServerChangeToken, moreComing: Bool, clientChangeTokenData: Data?) {
        let db = try engine()
        let c = try db.changes(in: zoneID.zoneName, since: token)
        return (c.changed.map { wrap($0, db) }, c.deleted, c.token, c.moreComing, c.clientChangeToken)
    }
}
