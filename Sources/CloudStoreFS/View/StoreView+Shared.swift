import CloudStore
import Foundation

/// What a participant reaches of one shared zone at one zone generation: the engine's
/// ``ShareAccess`` and each record's permission as found, so a listing walks each record's
/// `parent` chain once per change of the zone.
///
/// `@unchecked Sendable`: `lock` guards `permissions`; taken alone.
final class SharedZoneAccess: @unchecked Sendable {
    let generation: UInt64
    let access: ShareAccess
    private let lock = NSLock()
    private var permissions: [String: ShareInfo.Permission?] = [:]

    init(generation: UInt64, access: ShareAccess) {
        self.generation = generation
        self.access = access
    }

    /// The permission found for record `name`, when it was asked before: nil when never asked,
    /// `.some(nil)` when the record is not shared.
    func known(_ name: String) -> ShareInfo.Permission?? { lock.withLock { permissions[name] } }

    func note(_ name: String, _ permission: ShareInfo.Permission?) { lock.withLock { permissions[name] = .some(permission) } }
}

/// `<container>/shared/<owner>/<zone>/<RecordType>/<recordName>.json`: the zones other users
/// share with the caller, each owner's under their name, holding only what the shares grant.
/// Reading and saving go through the engine's shared database (``SharedDatabase``), so a save
/// has every check an API save has; the modes show what the caller may do (the kernel refuses
/// the rest first), the files and folders belong to the zone's owner.
extension StoreView {
    static let sharedFolderName = "shared"
    /// Who has no share there may not make folders in an owner's folder (no zone is made there).
    static let sharedOwnerFolderMode: UInt32 = 0o555

    /// The caller's shared database.
    func sharedDatabase(_ container: String, user: String) throws(FSError) -> SharedDatabase {
        do { return try store.container(container).sharedDatabase(caller: engineCaller(user), environment: environment) } catch {
            throw error.fsError
        }
    }

    /// The folders of `shared/`: the owners with a zone shared with `user` that they accepted,
    /// by their names, as (folder name, owner's user record name).
    func sharedOwners(_ container: String, user: String) throws(FSError) -> [(String, String)] {
        let zones: [RecordZone]
        let shared = try sharedDatabase(container, user: user)
        do throws(CKError) { zones = try shared.zones() } catch { throw error.fsError }
        let owners = Set(zones.map(\.zoneID.ownerName))
        return owners.compactMap { owner in ownerFolderName(container, owner).map { ($0, owner) } }.sorted { $0.0 < $1.0 }
    }

    /// The owner folder `name` of `shared/`, when it is one of ``sharedOwners(_:user:)``.
    func sharedOwnerKey(_ container: String, user: String, folder name: String) throws(FSError) -> DatabaseKey? {
        guard let identities = try? store.container(container).identities(),
              let owner = identities.first(where: { StoreLayout.encode($0.name) == name }) else { return nil }
        let key = DatabaseKey(container: container, scope: .shared, user: user, owner: owner.userRecordName)
        guard owner.name != user else { return nil }
        let zones: [RecordZone]
        let db = try database(key, caller: nil)
        do throws(CKError) { zones = try db.zones() } catch { throw error.fsError }
        return zones.isEmpty ? nil : key
    }

    /// An owner's folder name in `shared/`: their identity's name, spelled as a file name.
    func ownerFolderName(_ container: String, _ owner: String) -> String? {
        (try? store.container(container).identities())?.first { $0.userRecordName == owner }.map { StoreLayout.encode($0.name) }
    }

    /// The caller's access to a shared zone, as of the zone's generation now (or newer).
    func shareAccess(_ d: DatabaseKey, _ zone: String) throws(FSError) -> SharedZoneAccess {
        let ref = ZoneRef(database: d, zone: zone)
        // The generation is read before the shares: what is kept is never older than it says.
        let (generation, kept) = stateLock.withLock { (zoneGenerations[ref, default: 0], sharedAccess[ref]) }
        if let kept, kept.generation == generation { return kept }
        let access: ShareAccess
        let db = try database(d, caller: nil)
        do throws(CKError) { access = try db.shareAccess(in: zone) } catch { throw error.fsError }
        let made = SharedZoneAccess(generation: generation, access: access)
        stateLock.withLock { sharedAccess[ref] = made }
        return made
    }

    /// What the caller may do with `record` of a shared zone (its parents read from `cat`);
    /// nil when it is not shared with them.
    func sharedPermission(of record: Record, _ d: DatabaseKey, _ zone: String, catalog cat: ZoneCatalog) throws(FSError) -> ShareInfo.Permission? {
        let a = try shareAccess(d, zone)
        let name = record.recordID.recordName
        if let known = a.known(name) { return known }
        let found: ShareInfo.Permission?
        do throws(CKError) { found = try a.access.permission(of: record, lookUp: cat.record(named:)) } catch { throw error.fsError }
        a.note(name, found)
        return found
    }

    /// The record named `name` of a shared zone as the caller sees it; nil when there is none
    /// or it is not shared with them.
    func sharedRecord(named name: String, _ d: DatabaseKey, _ zone: String, catalog cat: ZoneCatalog) throws(FSError) -> Record? {
        let record: Record?
        do throws(CKError) { record = try cat.record(named: name) } catch { throw error.fsError }
        guard let record, try sharedPermission(of: record, d, zone, catalog: cat) != nil else { return nil }
        return try shareAccess(d, zone).access.shown(record)
    }

    /// Whether record `name` of a shared zone is there for the caller (found once per change
    /// of the zone).
    func isShared(_ name: String, _ d: DatabaseKey, _ zone: String, catalog cat: ZoneCatalog) throws(FSError) -> Bool {
        if let known = try shareAccess(d, zone).known(name) { return known != nil }
        return try sharedRecord(named: name, d, zone, catalog: cat) != nil
    }

    /// The caller's permission on a record file of a shared zone, for its mode; read-only when
    /// it cannot be told.
    func sharedPermission(_ t: RecordTarget) -> ShareInfo.Permission {
        guard let cat = try? catalog(t.database, t.zone), let record = try? cat.record(named: t.name),
              let found = try? sharedPermission(of: record, t.database, t.zone, catalog: cat) else { return .readOnly }
        return found ?? .readOnly
    }

    /// The mode of a shared zone's folders: writable when some share of the zone lets the
    /// caller change records.
    func sharedFolderMode(_ d: DatabaseKey, _ zone: String) throws(FSError) -> UInt32 {
        try shareAccess(d, zone).access.writesSomewhere ? 0o777 : 0o555
    }

    /// The zones of the catalog `cat` as the view shows them: the owner's own, and each
    /// participant's view of it, all read from the one catalog of the zone's folder.
    func zoneRefs(sharing cat: ZoneCatalog) -> [ZoneRef] {
        stateLock.withLock { catalogs.filter { $0.value === cat }.map(\.key) }
    }
}
