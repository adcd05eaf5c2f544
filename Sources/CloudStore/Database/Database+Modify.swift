import Foundation

/// How a save treats a record that changed on the server; the raw values are Apple's
/// (`CKModifyRecordsOperation.RecordSavePolicy`).
public enum SavePolicy: Int, Sendable, CaseIterable {
    /// Fail with `serverRecordChanged` unless the client's change tag is the stored one.
    case ifServerRecordUnchanged = 0
    /// Write only the client's changed keys over the stored record.
    case changedKeys = 1
    /// Write all the client's fields; keys only the server has stay.
    case allKeys = 2
}

/// How one record's save meets the stored record: whether the client's change tag must be the
/// stored one, and which of the client's fields are written. A ``SavePolicy`` is one rule for
/// every record; CloudKit Web Services' operation types (`update`, `forceReplace`, …) mix them
/// within one operation.
public struct SaveRule: Sendable, Hashable {
    /// Which of the client's fields a save writes.
    public enum Fields: Sendable, Hashable {
        /// The client's fields are the record's: keys the client lacks are removed.
        case replaceAll
        /// The client's changed keys are written over the stored fields.
        case changedKeys
        /// The client's fields are written over the stored ones; keys only the server has stay.
        case allKeys
    }

    /// The save fails with `serverRecordChanged` unless the client's change tag is the stored
    /// one; a client without a tag may only create the record.
    public var checksChangeTag: Bool
    public var fields: Fields

    public init(checksChangeTag: Bool, fields: Fields) {
        self.checksChangeTag = checksChangeTag
        self.fields = fields
    }

    /// The rule a policy gives every record.
    public init(_ policy: SavePolicy) {
        switch policy {
        case .ifServerRecordUnchanged: self.init(checksChangeTag: true, fields: .replaceAll)
        case .changedKeys: self.init(checksChangeTag: false, fields: .changedKeys)
        case .allKeys: self.init(checksChangeTag: false, fields: .allKeys)
        }
    }
}

/// Options of one modify operation.
public struct ModifyOptions: Sendable {
    public var savePolicy: SavePolicy = .ifServerRecordUnchanged
    /// Rules for single records, by the ID they are saved under, in place of `savePolicy`.
    public var saveRules: [RecordID: SaveRule] = [:]
    /// Deletes that check a change tag: each fails with `serverRecordChanged` unless the stored
    /// record's tag is the one given. Other deletes check none.
    public var deleteChangeTags: [RecordID: String] = [:]
    /// A failure in a zone fails every change in that zone.
    public var atomic = true
    /// Kept with each zone this operation changes.
    public var clientChangeToken: Data?

    public init(savePolicy: SavePolicy = .ifServerRecordUnchanged, atomic: Bool = true, clientChangeToken: Data? = nil) {
        self.savePolicy = savePolicy
        self.atomic = atomic
        self.clientChangeToken = clientChangeToken
    }
}

/// What a modify operation did, item by item.
public struct ModifyResult: Sendable {
    /// One per record to save, in the order given.
    public var saveResults: [(RecordID, Result<Record, CKError>)]
    /// One per ID to delete, in the order given.
    public var deleteResults: [(RecordID, Result<Void, CKError>)]
    /// Notifications that could not be sent for changes that were saved: the saves
    /// stand; the subscribers may miss them and should fetch changes.
    public var notificationErrors: [CKError] = []

    package init(saveResults: [(RecordID, Result<Record, CKError>)], deleteResults: [(RecordID, Result<Void, CKError>)],
                 notificationErrors: [CKError] = []) {
        (self.saveResults, self.deleteResults, self.notificationErrors) = (saveResults, deleteResults, notificationErrors)
    }

    public var savedRecords: [Record] { saveResults.compactMap { try? $0.1.get() } }
    public var deletedRecordIDs: [RecordID] { deleteResults.compactMap { (try? $0.1.get()) != nil ? $0.0 : nil } }

    /// nil when every item succeeded, else `partialFailure` with each failed item's error.
    public var error: CKError? {
        var errors: [CKItemID: CKError] = [:]
        for (id, r) in saveResults { if case .failure(let e) = r { errors[.record(id)] = e } }
        for (id, r) in deleteResults { if case .failure(let e) = r { errors[.record(id)] = e } }
        return .partialFailure(errors, "\(errors.count) of \(saveResults.count + deleteResults.count) items failed")
    }
}

extension Database {
    /// Saves and deletes records, possibly across zones of this database.
    ///
    /// Throws only for errors of the whole operation (too many items, an unreadable store);
    /// item errors are in the result. `progress` is called per record with 0.0 and 1.0;
    /// `isCancelled` is asked before each zone is committed.
    public func modify(saving: [Record], deleting: [RecordID] = [], options: ModifyOptions = ModifyOptions(),
                       progress: ((RecordID, Double) -> Void)? = nil,
                       isCancelled: (() -> Bool)? = nil) throws(CKError) -> ModifyResult {
        // Deletes alone on a full disk: the store's reserve is given up and they are tried
        // once more, so that space can always be freed through ckfs.
        let deletesOnly = saving.isEmpty && !deleting.isEmpty
        do {
            let result = try modifyOnce(saving: saving, deleting: deleting, options: options, progress: progress, isCancelled: isCancelled)
            guard deletesOnly, result.error?.diskFull != nil, store.backend.releaseSpaceReserve() else { return result }
        } catch where deletesOnly && error.diskFull != nil && store.backend.releaseSpaceReserve() {}
        return try modifyOnce(saving: saving, deleting: deleting, options: options, progress: progress, isCancelled: isCancelled)
    }

    private func modifyOnce(saving: [Record], deleting: [RecordID], options: ModifyOptions,
                            progress: ((RecordID, Double) -> Void)?, isCancelled: (() -> Bool)?) throws(CKError) -> ModifyResult {
        _ = try writer("save or delete records")
        let limit = store.settings.maxItemsPerOperation
        guard saving.count + deleting.count <= limit else {
            throw CKError(.limitExceeded, "an operation may save and delete at most \(limit) items; this one has \(saving.count + deleting.count): split it into smaller operations")
        }
        var saveResults = [Result<Record, CKError>?](repeating: nil, count: saving.count)
        var deleteResults = [Result<Void, CKError>?](repeating: nil, count: deleting.count)
        // Group by zone, in order of first appearance.
        var zoneOrder: [String] = []
        var savesByZone: [String: [Int]] = [:]
        var deletesByZone: [String: [Int]] = [:]
        for (i, r) in saving.enumerated() {
            let z = r.recordID.zoneID.zoneName
            if savesByZone[z] == nil && deletesByZone[z] == nil { zoneOrder.append(z) }
            savesByZone[z, default: []].append(i)
        }
        for (i, id) in deleting.enumerated() {
            let z = id.zoneID.zoneName
            if savesByZone[z] == nil && deletesByZone[z] == nil { zoneOrder.append(z) }
            deletesByZone[z, default: []].append(i)
        }
        var notificationErrors: [CKError] = []
        for i in saving.indices { progress?(normalized(saving[i].recordID), 0) }
        for zone in zoneOrder {
            let saves = savesByZone[zone] ?? []
            let deletes = deletesByZone[zone] ?? []
            if isCancelled?() == true {
                let e = CKError(.operationCancelled, "the operation was cancelled before zone \(zone) was saved; nothing in it changed")
                for i in saves { saveResults[i] = .failure(e) }
                for i in deletes { deleteResults[i] = .failure(e) }
                continue
            }
            let outcome = modifyZone(zone, saves: saves.map { ($0, saving[$0]) }, deletes: deletes.map { ($0, deleting[$0]) }, options: options)
            for (i, r) in outcome.saves { saveResults[i] = r }
            for (i, r) in outcome.deletes { deleteResults[i] = r }
            if let e = outcome.notificationError { notificationErrors.append(e) }
        }
        for (i, r) in saveResults.enumerated() { if case .success? = r { progress?(normalized(saving[i].recordID), 1) } }
        return ModifyResult(
            saveResults: saving.indices.map { (normalized(saving[$0].recordID), saveResults[$0]!) },
            deleteResults: deleting.indices.map { (normalized(deleting[$0]), deleteResults[$0]!) },
            notificationErrors: notificationErrors)
    }

    /// Saves one record with the default policy; throws its error.
    @discardableResult
    public func save(_ record: Record, policy: SavePolicy = .ifServerRecordUnchanged) throws(CKError) -> Record {
        let result = try modify(saving: [record], options: ModifyOptions(savePolicy: policy))
        return try result.saveResults[0].1.get()
    }

    /// Deletes one record; throws its error (`unknownItem` when there is none).
    public func delete(_ id: RecordID) throws(CKError) {
        let result = try modify(saving: [], deleting: [id])
        try result.deleteResults[0].1.get()
    }

    // MARK: One zone

    enum ItemKey: Hashable { case save(Int), delete(Int) }

    func checkInput(_ record: Record) throws(CKError) {
        if record.isShare {
            try Names.checkRecordName(record.recordID.recordName)
            try checkShareFields(record)
            for (key, value) in record.fields { try checkValue(value, key: key) }
            try checkSize(record)
            return
        }
        try Names.checkRecordType(record.recordType)
        if let parent = record.parent {
            try Names.checkRecordName(parent)
            guard parent != record.recordID.recordName else {
                throw .invalid("record \(parent) cannot be its own parent; set parent to the record it belongs under, or to none")
            }
        }
        if record.recordType == Schema.usersRecordType {
            try checkUserRecord(record.recordID.recordName)
        } else {
            try Names.checkRecordName(record.recordID.recordName)
        }
        for (key, value) in record.fields {
            try Names.checkFieldKey(key, recordType: record.recordType)
            try checkValue(value, key: key)
        }
        try checkEncryptedFields(record)
        try checkSize(record)
    }

    /// Encrypted fields are kept only in private (and shared) databases, and hold neither
    /// references (the server must read them) nor assets (CloudKit encrypts those anyway).
    private func checkEncryptedFields(_ record: Record) throws(CKError) {
        guard let first = record.encryptedKeys.min() else { return }
        guard scope != .public else {
            throw .invalid("field \"\(first)\" is encrypted, and encrypted fields are not supported in the public database; save it as a field that is not encrypted, or keep the record in the private database")
        }
        if let key = record.encryptedKeys.sorted().first(where: { !FieldType.encryptable.contains(record.fields[$0]!.type.kind) }) {
            let type = record.fields[key]!.type
            throw .invalid("field \"\(key)\" holds a \(type.name) value, which cannot be encrypted: "
                + (type.kind == .reference ? "references stay readable by the server" : "assets are encrypted already")
                + "; set it as a field that is not encrypted")
        }
    }

    private func checkValue(_ value: FieldValue, key: String) throws(CKError) {
        switch value {
        case .double(let d) where !d.isFinite:
            throw .invalid("field \"\(key)\" holds \(d); only finite numbers can be stored")
        case .timestamp(let date) where !date.isStorable:
            throw .invalid("field \"\(key)\" holds a date outside the years 1 to 9999 (\(date.timeIntervalSince1970) s since 1970), which a date field cannot hold")
        case .reference(let r):
            try Names.checkRecordName(r.recordName, allowSystem: true)
        case .list(let kind, let values):
            for v in values {
                if case .list = v { throw .invalid("field \"\(key)\": a list holds field values of one type, not lists (nor, in an NSArray, other objects)") }
                guard v.type.kind == kind else {
                    throw .invalid("field \"\(key)\" is a \(kind.rawValue)_LIST but holds a \(v.type.name) value; a list holds values of one type")
                }
                try checkValue(v, key: key)
            }
        default: break
        }
    }

    /// Throws what a save (or delete) of this stored record by the caller would fail with for
    /// want of an account or of the right to it: for views that ask before a change.
    /// `permission` is the caller's in a shared zone, as `permission(of:lookUp:)` finds it.
    public func checkMayChange(_ stored: Record, deleting: Bool = false, permission: ShareInfo.Permission? = nil) throws(CKError) {
        _ = try writer(deleting ? "delete records" : "save records")
        _ = try policy.decide(deleting ? .delete : .update(parent: nil), stored, permission: permission)
    }

    /// Who may change what in this database (``AccessPolicy``), for this caller.
    var policy: AccessPolicy {
        AccessPolicy(scope: scope, userRecordName: userRecordName, ownerName: ownerName) { [container, identity] type throws(CKError) in
            // Roles may have been given or taken by another process: as the file holds them now.
            guard let identity else { return false }
            return try container.fresh().hasWriteRole(identity, recordType: type)
        }
    }

    /// A user record is saved only by its user, in the public database, and is never created
    /// under another name.
    private func checkUserRecord(_ name: String) throws(CKError) {
        guard scope == .public, name == userRecordName else {
            if scope == .public, name.hasPrefix("_"), (try? container.fresh().identity(userRecordName: name)) != nil {
                throw CKError(.permissionFailure, "user record \(name) belongs to another user; only its user may change it")
            }
            throw .invalid("records of type Users cannot be created: each user has one, in the public database, named by the user record ID (yours is \(userRecordName.isEmpty ? "given by ckfs user whoami" : userRecordName))")
        }
    }

    func checkSize(_ record: Record) throws(CKError) {
        let max = store.settings.maxRecordBytes
        guard record.size <= max else {
            throw CKError(.limitExceeded, "record \(record.recordID.recordName) is \(record.size) bytes; a record may hold at most \(max) bytes of fields (assets are not counted): move large data into an asset")
        }
    }

    /// The record with its assets in the zone: a file given by path is stored (content-addressed),
    /// and an asset named by its checksum alone (a web client's, a fetched `CKAsset`'s) must be
    /// one the zone holds, at the size its file has. Refused otherwise, naming the field: a
    /// record never names an asset the store does not have.
    func resolveAssets(_ record: Record, server: Record?, txn: any ZoneTransaction) throws(CKError) -> Record {
        func resolve(_ a: Asset, _ key: String) throws(CKError) -> Asset {
            if let file = a.pendingFile { return try txn.storeAsset(from: file) }
            if let kept = server?.asset(checksum: a.fileChecksum) { return kept }
            if let size = txn.storedAssetSize(a.fileChecksum) { return Asset(fileChecksum: a.fileChecksum, size: size) }
            if let source = a.copyFrom {
                let copied = try txn.storeAsset(from: source)
                guard copied.fileChecksum == a.fileChecksum else {
                    throw CKError(.invalidArguments, "field \"\(key)\" of record \(record.recordID.recordName): the file of asset \(a.fileChecksum) at \(source) no longer holds its contents")
                }
                return copied
            }
            throw CKError(.invalidArguments, "field \"\(key)\" of record \(record.recordID.recordName) names asset \(a.fileChecksum), which zone \(record.recordID.zoneID.zoneName) does not hold; upload the file (assets/upload, or give its path), or name an asset a record of this zone holds")
        }
        var fields = record.fields
        for (key, value) in record.fields {
            switch value {
            case .asset(let a):
                fields[key] = .asset(try resolve(a, key))
            case .list(.asset, let values):
                var resolved: [FieldValue] = []
                for case .asset(let a) in values { resolved.append(.asset(try resolve(a, key))) }
                fields[key] = .list(.asset, resolved)
            default: break
            }
        }
        return fields == record.fields ? record : record.replacingFields(fields, encryptedKeys: record.encryptedKeys)
    }

    /// The error of a save refused because the server's record changed; its ancestor is added
    /// by ``addAncestors(_:storage:)`` once the zone is released.
    func conflict(server: Record, client: Record) -> CKError {
        let name = client.recordID.recordName
        var e = CKError(.serverRecordChanged, client.recordChangeTag == nil
            ? "record \(name) already exists (change tag \(server.recordChangeTag ?? "?")); fetch it and save your change on top of it, or save with policy changed-keys or all-keys"
            : "record \(name) changed on the server since your version (your change tag \(client.recordChangeTag!), the server's \(server.recordChangeTag ?? "?")); fetch it, apply your change again and save, or save with policy changed-keys or all-keys")
        e.serverRecordValue = server
        e.clientRecordValue = client
        return e
    }

    /// Gives each refused save its ancestor: the version the client last fetched. Its change
    /// tag is the sequence number of the log entry that saved it, which the log finds by
    /// reading a few entries (``ZoneStorage/loggedEntry(seq:)``); runs after the zone's lock
    /// is released, so other saves to the zone do not wait for it. None when the log no
    /// longer holds that entry (compacted away), as CloudKit allows.
    private func addAncestors(_ failures: inout [ItemKey: CKError], storage: any ZoneStorage) {
        // An old version may be from before the record was shared: none in a shared database.
        guard scope != .shared else { return }
        var entries: [Int64: LogEntry?] = [:]
        for (key, e) in failures where e.code == .serverRecordChanged && e.ancestorRecordValue == nil {
            guard let client = e.clientRecordValue, let tag = client.recordChangeTag, let seq = Int64(tag) else { continue }
            if entries[seq] == nil { entries[seq] = .some(try? storage.loggedEntry(seq: seq)) }
            let name = client.recordID.recordName
            failures[key]!.ancestorRecordValue = entries[seq]!?.saved.first { $0.recordID.recordName == name }
        }
    }

    private typealias ZoneOutcome = (saves: [(Int, Result<Record, CKError>)], deletes: [(Int, Result<Void, CKError>)], notificationError: CKError?)

    /// Saves and deletes in one zone, step by step: check the input that needs no lock; under
    /// the zone's lock, authorize the caller in the zone, plan the saves and the deletes (each
    /// authorized as its stored record is read), link shares and parents, follow DELETE_SELF
    /// references, check the quota and write the log entry (the commit); then tell subscribers
    /// (under the lock) and the shares' participants (after it). The steps are in
    /// `Database+ZoneBatch.swift`.
    private func modifyZone(_ zoneName: String, saves: [(Int, Record)], deletes: [(Int, RecordID)], options: ModifyOptions) -> ZoneOutcome {
        var plan = ZonePlan(failures: checkedInput(saves: saves, deletes: deletes))
        let shareNames: [String]
        do throws(CKError) {
            try Names.checkZoneName(zoneName)
            shareNames = try sharesBeforeLock(in: zoneName, saves: saves)
        } catch {
            return finish(saves, deletes, failures: plan.failures, all: error)
        }
        let storage = zoneStorage(zoneName)
        // Subscriptions: read under the zone's lock, so one saved before this commit fires for it.
        var watching: [Subscription] = []
        var notificationError: CKError?
        // For the participants of the zone's shares, told once the zone is released.
        var committedEntry: LogEntry?
        do throws(CKError) {
            try storage.write { (txn) throws(CKError) -> (LogEntry?, Void) in
                do throws(CKError) { watching = try subscriptionsWatching(zoneName) } catch { notificationError = error }
                let now = Store.now()
                let batch = ZoneBatch(name: zoneName, zone: zoneID(zoneName), options: options, shareNames: shareNames,
                                      grants: try grantsInZone(zoneName, shareNames: shareNames, txn: txn), now: now,
                                      stamp: Stamp(timestamp: now, userRecordName: userRecordName, deviceID: caller.deviceID),
                                      tag: String(txn.lastSeq + 1), watched: !watching.isEmpty, policy: policy)
                try planSaves(saves, batch, &plan, txn)
                try planDeletes(deletes, batch, &plan, txn)
                let rootLinks = try planLinks(batch, &plan, txn)
                try planCascade(deletes, batch, &plan, txn)
                let usage = try checkQuota(batch, &plan, txn)
                return (try logEntry(batch, &plan, rootLinks: rootLinks, usage: usage, txn), ())
            } committed: { (entry) in
                committedEntry = entry
                guard !watching.isEmpty else { return }
                do throws(CKError) { try self.notify(watching, zone: zoneName, entry: entry, before: plan.before) } catch { notificationError = error }
            }
        } catch {
            // The zone could not be written at all, or the commit failed: nothing in it applied.
            addAncestors(&plan.failures, storage: storage)
            return finish(saves, deletes, failures: plan.failures, all: error)
        }
        addAncestors(&plan.failures, storage: storage)
        if let committedEntry { notifyParticipants(zoneName, entry: committedEntry, shares: plan.endedShares) }
        // Still in the registry: a file deleted or damaged meanwhile was made again from the
        // zones, maybe before this share was committed.
        if scope != .public, plan.committed.values.contains(where: \.isShare) {
            try? ShareRegistry(container: container, environment: environment).include(owner: ownerName, zone: zoneName)
        }
        if options.atomic && !plan.failures.isEmpty {
            return finish(saves, deletes, failures: plan.failures, all: nil)
        }
        return (saves.map { (i, _) in
                    (i, plan.committed[.save(i)].map { .success($0) } ?? .failure(plan.failures[.save(i)] ?? CKError(.internalError, "item was not saved")))
                },
                deletes.map { (i, _) in
                    (i, plan.failures[.delete(i)].map { .failure($0) } ?? .success(()))
                },
                notificationError)
    }
    /// Results when nothing in the zone was applied: the items' own errors, and for the rest
    /// `all` (the zone's error) or `batchRequestFailed`.
    private func finish(_ saves: [(Int, Record)], _ deletes: [(Int, RecordID)], failures: [ItemKey: CKError], all: CKError?) -> ZoneOutcome {
        let other = all ?? CKError(.batchRequestFailed, "not saved because another change in the same atomic zone batch failed; fix that item and retry the operation")
        return (saves.map { ($0.0, .failure(failures[.save($0.0)] ?? other)) },
                deletes.map { ($0.0, .failure(failures[.delete($0.0)] ?? other)) },
                nil)
    }
}
