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

    /// What is under `shared/` is one user's view, reached by them alone: its folders are
    /// the sharers' (so their modes let the caller in), and another user holding one (a working
    /// folder, an open folder handed over) must not read or save through it (EACCES).
    func checkReaches(_ key: NodeKey, _ caller: CallerContext) throws(FSError) {
        let user: String
        switch key {
        case .shared(_, let u): user = u
        default:
            guard let d = key.databaseKey, d.scope == .shared else { return }
            user = d.user
        }
        guard users.userName(caller.uid) == user else {
            logger.notice("refused uid \(caller.uid) a folder of \(user)'s shared/: each user reaches only their own")
            throw FSError(Posix.EACCES, "this is another user's shared/")
        }
    }

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
        let zones: [RecordZone]
        let db: Database
        // The caller's own name: their zones are in private/, none here (the engine says EINVAL).
        do { db = try database(key, caller: nil) } catch { if error.errno == Posix.EINVAL { return nil } else { throw error } }
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
        let (generation, kept) = generations.sharedAccess(ref)
        if let kept, kept.generation == generation { return kept }
        let access: ShareAccess
        let db = try database(d, caller: nil)
        do throws(CKError) { access = try db.shareAccess(in: zone) } catch { throw error.fsError }
        let made = SharedZoneAccess(generation: generation, access: access)
        generations.keep(made, for: ref)
        return made
    }

    /// What the caller may do with record `name` of a shared zone, and the record as they see
    /// it; nil when there is none or it is not shared with them. The access is taken before the
    /// record is read, so what is noted for its generation is never found from an older record
    /// (a `parent` changed since would otherwise be kept for the generation that changed it).
    func sharedItem(named name: String, _ d: DatabaseKey, _ zone: String, catalog cat: any ZoneCatalog) throws(FSError) -> (Record, ShareInfo.Permission)? {
        let a = try shareAccess(d, zone)
        if case .some(nil) = a.known(name) { return nil }
        let record: Record?
        let found: ShareInfo.Permission?
        do throws(CKError) {
            record = try cat.record(named: name)
            found = try record.flatMap { (r) throws(CKError) in try a.access.permission(of: r, lookUp: cat.record(named:)) }
        } catch { throw error.fsError }
        guard let record else { return nil }
        a.note(name, found)
        return found.map { (a.access.shown(record), $0) }
    }

    /// The record named `name` of a shared zone as the caller sees it; nil when there is none
    /// or it is not shared with them.
    func sharedRecord(named name: String, _ d: DatabaseKey, _ zone: String, catalog cat: any ZoneCatalog) throws(FSError) -> Record? {
        try sharedItem(named: name, d, zone, catalog: cat)?.0
    }

    /// Whether record `name` of a shared zone is there for the caller (found once per change
    /// of the zone).
    func isShared(_ name: String, _ d: DatabaseKey, _ zone: String, catalog cat: any ZoneCatalog) throws(FSError) -> Bool {
        if let known = try shareAccess(d, zone).known(name) { return known != nil }
        return try sharedRecord(named: name, d, zone, catalog: cat) != nil
    }

    /// A shared record the caller may not change (read-only), a share they may only leave
    /// (by removing its file), a hierarchy's root only its owner moves or removes: EACCES,
    /// said in the log. The engine's access policy answers, as it does again when it saves.
    func checkMayChangeShared(_ t: RecordTarget, deleting: Bool, caller: CallerContext) throws(FSError) {
        guard let (record, permission) = try sharedItem(named: t.name, t.database, t.zone, catalog: try catalog(t.database, t.zone)) else { return }
        let db = try database(t.database, caller: caller)
        do throws(CKError) { try db.checkMayChange(record, deleting: deleting, permission: permission) } catch {
            logger.notice("refused \(deleting ? "removal" : "change") of \(mountPath(.record(t))) by uid \(caller.uid): \(error.message)")
            throw error.fsError
        }
    }

    /// The caller's permission on a record file of a shared zone, for its mode; read-only when
    /// it cannot be told.
    func sharedPermission(_ t: RecordTarget) -> ShareInfo.Permission {
        // Asked for every file a listing shows, just after its record was read: the permission
        // found then is kept for the zone's generation.
        if case .some(.some(let known)) = try? shareAccess(t.database, t.zone).known(t.name) { return known }
        guard let cat = try? catalog(t.database, t.zone), let found = try? sharedItem(named: t.name, t.database, t.zone, catalog: cat) else {
            return .readOnly
        }
        return found.1
    }

    /// The mode of a shared zone's folders: writable when some share of the zone lets the
    /// caller change records.
    func sharedFolderMode(_ d: DatabaseKey, _ zone: String) throws(FSError) -> UInt32 {
        try shareAccess(d, zone).access.writesSomewhere ? 0o777 : 0o555
    }

    /// The zones of the catalog `cat` as the view shows them: the owner's own, and each
    /// participant's view of it, all read from the one catalog of the zone's folder.
    func zoneRefs(sharing cat: any ZoneCatalog) -> [ZoneRef] {
        catalogs.zones(showing: cat)
    }
}
