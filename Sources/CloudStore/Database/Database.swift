import Foundation
import Synchronization

/// One database of a container as one caller sees it: the public database, the caller's
/// private database, or the zones of one other user's private database that are shared with
/// the caller (scope `.shared`; ``SharedDatabase`` puts those of every owner together). Safe
/// to share between threads.
public final class Database: Sendable {
    public let container: Container
    public let scope: DatabaseScope
    public let environment: Environment
    public let caller: Caller
    /// The caller's identity; nil when the caller has no account or a restricted one, and
    /// then this is the public database, which reads but does not write.
    public let identity: Identity?
    /// The caller's user record name in this container; empty without an identity.
    public var userRecordName: String { identity?.userRecordName ?? "" }
    /// What the backend keeps of this database: its zones.
    let storage: any DatabaseStorage
    /// The default zone's storage, once asked for. That zone cannot be deleted, so the store
    /// keeps the same storage for it while this object lives; most reads name it, and this
    /// spares each of them finding it in the backend's table.
    private let defaultZoneStorage = Mutex<(any ZoneStorage)?>(nil)

    /// Owner name of the public database's zone.
    public static let publicOwnerName = ZoneID.publicOwnerName

    /// The store this database is in.
    public var store: Store { container.store }
    /// Owner of this database's zones: the caller in a private database, the user who shares
    /// them in a shared one.
    public let ownerName: String
    /// The quota a save is held to: the owner's private quota in a shared database.
    public var quotaBytes: Int64 { scope == .public ? container.publicQuotaBytes : container.privateQuotaBytes }

    package init(container: Container, scope: DatabaseScope, environment: Environment, caller: Caller, identity: Identity?,
         owner: String? = nil) throws(CKError) {
        self.container = container
        self.scope = scope
        self.environment = environment
        self.caller = caller
        self.identity = identity
        switch scope {
        case .public: ownerName = Self.publicOwnerName
        case .private: ownerName = identity?.userRecordName ?? ""
        case .shared: ownerName = owner ?? ""
        }
        self.storage = container.store.backend.databaseStorage(container: container.identifier, environment: environment, scope: scope,
                                                               owner: ownerName)
        if scope != .shared, !zoneStorage(ZoneID.defaultZoneName).exists {
            _ = try storage.createZone(newZoneMeta(ZoneID.defaultZoneName, encryptionScope: .perRecord))
        }
    }

    /// The caller's identity, for a change: with no account the public database only reads.
    func writer(_ purpose: String) throws(CKError) -> Identity {
        // Restricted since this object was made (a long-lived mount keeps its databases)?
        guard let identity, try !container.fresh().isRestricted(identity) else {
            throw CKError(.notAuthenticated, caller.hasAccount
                ? "\(caller.userName) cannot \(purpose): the account is restricted or unknown in container \(container.identifier); the public database only reads without one"
                : "no account: \(purpose) needs an identity; the public database only reads without one (act as one with --user NAME)")
        }
        return identity
    }

    /// The zone ID as stored: the caller's name for the owner is replaced by the real one.
    public func zoneID(_ name: String) -> ZoneID { ZoneID(zoneName: name, ownerName: ownerName) }

    package func normalized(_ id: RecordID) -> RecordID { RecordID(recordName: id.recordName, zoneID: zoneID(id.zoneID.zoneName)) }

    package func zoneStorage(_ name: String) -> any ZoneStorage {
        guard name == ZoneID.defaultZoneName else { return storage.zone(name) }
        return defaultZoneStorage.withLock { kept in
            if let kept { return kept }
            let zone = storage.zone(name)
            kept = zone
            return zone
        }
    }

    private func newZoneMeta(_ name: String, encryptionScope: ZoneEncryptionScope) -> ZoneMeta {
        var meta = ZoneMeta(zoneName: name, ownerName: ownerName, epoch: Names.randomEpoch(), created: Store.now())
        if encryptionScope == .perZone { meta.encryptionScope = encryptionScope.rawValue }
        return meta
    }

    /// Bytes of records and assets in this database: the figure its quota limits.
    public func usage() throws(CKError) -> Int64 { try usage(excluding: nil) }

    /// Usage of every zone but one (the one a commit is computing itself).
    func usage(excluding zone: String?) throws(CKError) -> Int64 { try storage.usage(excluding: zone) }

    func zoneNames() throws(CKError) -> [String] { try storage.zoneNames() }
}

// MARK: Zones

/// A zone and what it can do.
public struct RecordZone: Sendable, Equatable {
    public var zoneID: ZoneID
    public var capabilities: [String]
    /// Milliseconds since 1970.
    public var created: Int64
    /// The record name of the share of the whole zone (``ShareInfo/zoneWideRecordName``), when
    /// the zone has one.
    public var share: String? = nil
    /// How the zone's encrypted values are keyed, fixed when the zone is made.
    public var encryptionScope = ZoneEncryptionScope.perRecord
}

/// CloudKit's encryption scope of a zone: keys per record (the default) or one per zone. A
/// zone with per-zone encryption is shared only whole. (A store here encrypts nothing on disk;
/// the scope is kept, and its rules hold.)
public enum ZoneEncryptionScope: String, Sendable {
    case perRecord
    case perZone
}

extension ZoneMeta {
    /// The zone's encryption scope: per record unless `zone.json` says `perZone`.
    var encryption: ZoneEncryptionScope { encryptionScope.flatMap(ZoneEncryptionScope.init(rawValue:)) ?? .perRecord }
}

extension Database {
    /// Creates a custom zone in the private database; creating one that exists returns it.
    /// `encryptionScope` is set when the zone is made: asking for another one of a zone that
    /// exists is `invalidArguments`.
    @discardableResult
    public func createZone(_ name: String, encryptionScope: ZoneEncryptionScope = .perRecord) throws(CKError) -> RecordZone {
        try Names.checkZoneName(name)
        guard scope == .private else {
            throw .invalid(scope == .public ? "the public database has only the default zone; create custom zones in the private database"
                : "zones of the shared database belong to the users who share them; create custom zones in your private database")
        }
        _ = try writer("create zones")
        if name != ZoneID.defaultZoneName, try storage.createZone(newZoneMeta(name, encryptionScope: encryptionScope)) {
            notifyZoneChanged(name)
        }
        let zone = try zone(name)
        guard zone.encryptionScope == encryptionScope else {
            throw .invalid("zone \(name) has \(zone.encryptionScope.rawValue) encryption; a zone's encryption scope is set when the zone is made and never changes (save it with \(zone.encryptionScope.rawValue), or make a zone of another name)")
        }
        return zone
    }

    /// A zone; in a shared database only one shared with the caller (`zoneNotFound` otherwise).
    /// `includingShare` also looks for its zone-wide share (a record read, which only the
    /// Swift API's `CKRecordZone.share` needs).
    public func zone(_ name: String, includingShare: Bool = false) throws(CKError) -> RecordZone {
        if scope == .shared { _ = try currentGrants(name) }
        return try storedZone(name, includingShare: includingShare)
    }

    /// ``zone(_:includingShare:)`` for a zone the caller's grants were checked for already.
    func storedZone(_ name: String, includingShare: Bool = false) throws(CKError) -> RecordZone {
        let meta = try zoneStorage(name).readMeta()
        let encryption = meta.encryption
        // Every custom zone of a private database can be shared, a hierarchy or whole; one with
        // per-zone encryption only whole.
        let sharing = scope == .public || name == ZoneID.defaultZoneName ? []
            : encryption == .perZone ? ["zoneWideSharing"] : ["sharing", "zoneWideSharing"]
        // Only a custom zone of a private database holds a share, by that name when it is the zone's.
        let share = sharing.isEmpty || !includingShare ? nil
            : try zoneStorage(name).record(named: ShareInfo.zoneWideRecordName).map { _ in ShareInfo.zoneWideRecordName }
        return RecordZone(zoneID: zoneID(meta.zoneName), capabilities: meta.capabilities + sharing.filter { !meta.capabilities.contains($0) },
                          created: meta.created, share: share, encryptionScope: encryption)
    }

    /// The zones; in a shared database those of the owner shared with the caller.
    public func zones(includingShare: Bool = false) throws(CKError) -> [RecordZone] {
        var out: [RecordZone] = []
        for n in try zoneNames() {
            if scope == .shared, (try? currentGrants(n)) == nil { continue }
            out.append(try storedZone(n, includingShare: includingShare))
        }
        return out
    }

    /// Deletes a custom zone and every record in it.
    public func deleteZone(_ name: String) throws(CKError) {
        guard name != ZoneID.defaultZoneName else {
            throw .invalid("the default zone cannot be deleted; delete its records instead")
        }
        guard scope != .shared else {
            throw CKError(.permissionFailure, "zone \(name) belongs to the user who shares it; only its owner may delete it (to leave the share, delete the share record)")
        }
        _ = try writer("delete zones")
        guard zoneStorage(name).exists else {
            throw CKError(.zoneNotFound, "zone \(name) does not exist")
        }
        let shares = (try? shareRecords(in: name)) ?? []
        try storage.deleteZone(name)
        notifyZoneChanged(name)
        if !shares.isEmpty {
            // Its participants lose the zone: their shared databases change.
            notifyParticipants(name, entry: LogEntry(seq: 0, time: Store.now(), userRecordName: userRecordName, deviceID: caller.deviceID,
                                                     clientChangeToken: nil, saved: [], deleted: [], usage: 0), shares: shares)
        }
    }
}

extension Database {
    /// The catalog of one zone, one per store object and zone, shared by everything in the
    /// process that reads the zone (the mount's view, queries); call ``ZoneCatalog/refresh()``
    /// before reading it.
    package func catalog(_ zone: String) -> any ZoneCatalog { zoneStorage(zone).catalog() }
}
