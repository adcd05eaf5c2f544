import CloudStore
import Foundation
import Logging

/// The store as a tree of directories and files:
///
/// ```
/// <container>/public/_defaultZone/<RecordType>/<recordName>.json
/// <container>/private/<zone>/<RecordType>/<recordName>.json   the caller's private database
/// <container>/shared/<owner>/<zone>/<RecordType>/<name>.json  what others share with the caller
/// <container>/keyvalue/<key>.plist                            the caller's key-value entries
/// lost+found/                                                 rejected text and why
/// ```
///
/// Reading a record renders its canonical JSON; writing one saves it with every check an API
/// save has. The view knows nothing of the kernel protocol: ``FuseSession`` calls it through
/// ``FileSystemOperations`` and it calls back only through ``KernelNotifier``.
///
/// Its locks, and the one order they are taken in, are in docs/Durability.md#the-mount-daemons. Engine calls
/// (saves, catalog refreshes) are made with no view lock held, except a handle's own lock
/// during its save, so one slow save holds up only its own file.
///
/// `@unchecked Sendable`: its state is in parts that keep their own locks; its one `var`,
/// `notifier`, is set before the mount serves requests and only read after.
public final class StoreView: @unchecked Sendable {
    public let store: Store
    public let environment: CloudStore.Environment
    let inodes = InodeTable()
    let handles = HandleTable<OpenFile>()
    let itemCache = ItemCacheTable()
    /// Records as their files show them (``renderedRecord(_:keep:)``, ``recordStat(_:)``).
    let renderCache = RenderCache()
    /// OS users and identities, as callers and owners (``UserTable``).
    let users: UserTable
    /// Editors' and tools' temporary files, and the items hidden behind them (``ScratchSpace``).
    let scratch: ScratchSpace
    /// Sizes the kernel was told, texts read with no open file (``InodeHints``).
    let hints = InodeHints()
    let lostAndFound: LostAndFound
    /// The commits the mount's ``ChangeWatcher`` follows, and which zones they show quiet.
    let changes: ChangeQueue
    /// Where this view is mounted, for messages; set before the mount serves requests.
    public let mountPoint: String
    /// The client the mount's saves come from: stable across remounts at one place.
    public let deviceID: String
    let daemonUID = Syscall.effectiveUserID
    let daemonGID = Syscall.effectiveGroupID
    let started = Store.now()
    /// The largest text a record file takes: the record limit plus room for JSON's own
    /// overhead (base64 of BYTES fields, quotes, keys). Past it a write fails with EFBIG.
    let maxFileBytes: Int
    /// Set once, before the mount serves requests.
    public var notifier: (any KernelNotifier)?
    let logger: Logger
    /// The containers the mount shows; nil shows every container of the store.
    let containers: Set<String>?

    // The view's state: each part keeps its own lock and says what it guarantees. The
    // daemon's lock order (docs/Durability.md#the-mount-daemons): an open or scratch file's
    // lock, then `generations`, then `pendingCreates`, then the scratch space's; every other
    // lock here is a leaf, held with nothing called.
    /// The changes seen in each zone, and what is kept as of them (``ZoneGenerations``).
    let generations = ZoneGenerations()
    /// Files created and not yet saved as items, by their open handle.
    let pendingCreates = PendingCreates()
    /// The databases the view acts on, by database and acting user.
    let openDatabases = OpenDatabases()
    /// The zone catalogs opened, by the zones that show them.
    let catalogs = OpenCatalogs()
    /// Type folders made with `mkdir` that hold no record yet.
    let madeTypeFolders = MadeTypeFolders()
    /// The key-value stores shown: their files, entries and rendered texts.
    let keyValueCache = KeyValueCache()
    /// Changes catalogs took in that the kernel has not been told of yet (``invalidatePending()``).
    let pendingInvalidations = PendingInvalidations()
    /// Who this view is to the catalogs it listens to.
    let listenerID = UInt64.random(in: 1...UInt64.max)

    struct ZoneRef: Hashable { var database: DatabaseKey; var zone: String }

    /// True when other users reach the mount (`allow_other`): per-caller names are then never
    /// cached by the kernel.
    public let sharedByUsers: Bool

    public init(store: Store, mountPoint: String, environment: CloudStore.Environment = .development, sharedByUsers: Bool = false,
                containers: Set<String>? = nil, logger: Logger = Logger(label: "ckfs.mount")) {
        self.store = store
        self.changes = ChangeQueue(commits: store.backend.commitFeed(of: ChangeQueue.Followed.self))
        self.sharedByUsers = sharedByUsers
        self.environment = environment
        self.mountPoint = mountPoint
        self.deviceID = Caller.mountDeviceID(mountPoint)
        self.lostAndFound = LostAndFound(storeRoot: store.layout.root)
        self.users = UserTable(store: store, fallbackUID: Syscall.effectiveUserID)
        self.scratch = ScratchSpace(logger: logger)
        self.maxFileBytes = store.settings.maxRecordBytes * 3 / 2 + 65536
        self.logger = logger
        self.containers = containers
    }

    /// The containers the mount shows, sorted: the store's, or those of them that
    /// ``containers`` names.
    func shownContainers() -> [String] {
        let all = (try? store.containerIdentifiers()) ?? []
        guard let containers else { return all }
        return all.filter { containers.contains($0) }
    }

    // MARK: Identities

    /// The owner of a database's folders: the private database's user, the user who shares a
    /// shared one, else the daemon's.
    func owner(_ d: DatabaseKey) -> UInt32 {
        switch d.scope {
        case .private: users.uid(ofUserNamed: d.user) ?? daemonUID
        case .shared: users.uid(ofCreator: d.owner, container: d.container)
        case .public: daemonUID
        }
    }

    /// The engine's caller for the OS user named `name` (as ``UserTable/userName(_:)`` gives
    /// it): the container finds its identity by uid.
    func engineCaller(_ name: String) -> Caller {
        Caller(userName: name, uid: users.uid(ofUserNamed: name), deviceID: deviceID)
    }

    // MARK: Databases and zones

    /// The database a node belongs to, acting as `caller` (the creator of what it saves).
    func database(_ key: DatabaseKey, caller: CallerContext?) throws(FSError) -> Database {
        let acting = key.scope == .public ? users.userName(caller?.uid ?? daemonUID) : key.user
        do throws(CKError) {
            return try openDatabases.database(key.scope, in: store.container(key.container), owner: key.owner,
                                              caller: engineCaller(acting), environment: environment)
        } catch {
            throw error.fsError
        }
    }

    /// The catalog of a zone, brought up to date; what changed elsewhere is dropped from the
    /// kernel's caches.
    func catalog(_ d: DatabaseKey, _ zone: String) throws(FSError) -> any ZoneCatalog {
        let ref = ZoneRef(database: d, zone: zone)
        let cat: any ZoneCatalog
        let known: Bool
        if let c = catalogs.catalog(ref) {
            cat = c
            known = true
        } else {
            known = false
            notifier?.willWait()  // a first load reads every record file of the zone
            cat = catalogs.keep(try database(d, caller: nil).catalog(zone), for: ref)
            // Whoever refreshes the catalog (this view, a query the engine makes in this
            // process), the view hears of it: no refresh reports a change twice.
            cat.listen(as: listenerID) { [weak self, weak cat] change in
                guard let self, let cat else { return }
                self.catalogChanged(cat, change)
            }
        }
        // A zone nobody wrote to since the last look needs no look, the watcher's queue proves
        // it: a `cat` of 10,000 records made 10,005 stats of the log before, none now.
        if known, changes.isQuiet(ref) { return cat }
        let look = changes.looking(at: ref)
        do { try cat.refresh() } catch {
            changes.forget(ref)
            if error.code == .zoneNotFound {
                catalogs.forget(ref)
                throw FSError(Posix.ENOENT, "zone \(zone) does not exist")
            }
            throw error.fsError
        }
        changes.looked(at: ref, since: look)
        invalidatePending()
        return cat
    }

    /// What the catalog `cat` took in, told by its refresh (whoever refreshed it) before any
    /// other refresh of the zone can return: each view of the zone (its owner's, each
    /// participant's, all served by the zone's one catalog) moves its generation on and drops
    /// its rendered text now; the kernel is told at the next ``invalidatePending()``, outside
    /// the refresh.
    func catalogChanged(_ cat: any ZoneCatalog, _ change: ZoneCatalogChange) {
        let taken = zoneRefs(sharing: cat).map { ($0, Self.change(change, as: $0)) }
        for (r, c) in taken { forgetRendered(c, in: r) }
        pendingInvalidations.add(taken)
    }

    /// Tells the kernel of the changes catalogs took in since the last call.
    func invalidatePending() {
        for (r, change) in pendingInvalidations.takeAll() { invalidate(change, in: r.database, r.zone) }
    }

    /// A change as one view of its zone takes it: in a shared zone a save may share or
    /// unshare other records (a share's participants, a record's `parent`), so any save
    /// there counts as a reload.
    static func change(_ change: ZoneCatalogChange, as ref: ZoneRef) -> ZoneCatalogChange {
        if ref.database.scope == .shared, case .records = change { return .reloaded }
        return change
    }

    /// Moves the zone's generation on and drops the rendered text of what changed; called by
    /// the catalog's refresh, before any other refresh of the zone can return.
    func forgetRendered(_ change: ZoneCatalogChange, in zone: ZoneRef) {
        generations.advance(zone)
        renderCache.forget(change, in: zone)
    }

    /// Drops from the kernel's caches what a change reached (the view's own were dropped by
    /// ``forgetRendered(_:in:)``).
    func invalidate(_ change: ZoneCatalogChange, in d: DatabaseKey, _ zone: String) {
        switch change {
        case .none: return
        case .records(let names):
            for (name, type) in names {
                let target = RecordTarget(database: d, zone: zone, type: type, name: name)
                if let ino = inodes.existingInode(for: target.key) { notifier?.invalidateNode(ino) }
                if let dir = inodes.existingInode(for: .recordType(d, zone: zone, type: type)) {
                    notifier?.invalidateEntry(parent: dir, name: target.fileName)
                }
            }
        case .reloaded, .zoneGone:
            for (key, ino) in inodes.inodes(where: { $0.zone.map { $0.0 == d && $0.1 == zone } ?? false }) {
                // Not a type folder's pages: they are the kernel's copy of its listing, which
                // the next OPENDIR checks anyway, and dropping them while a reader fills them
                // leaves the kernel with a copy it can neither finish nor reset (it then lists
                // through the daemon every time, for as long as it keeps the folder's inode).
                if case .recordType = key { continue }
                notifier?.invalidateNode(ino)
                if case .record(_, _, let type, let name) = key, let dir = inodes.existingInode(for: .recordType(d, zone: zone, type: type)) {
                    notifier?.invalidateEntry(parent: dir, name: ItemFileName.record.make(name))
                }
            }
            if change == .zoneGone, let dbIno = inodes.existingInode(for: .database(d)) {
                notifier?.invalidateEntry(parent: dbIno, name: zone)
            }
        }
    }

    /// Every zone catalog the view has opened, for the watcher.
    var openZones: [ZoneRef] { catalogs.zones }

    // MARK: Rendering

    /// A record as its file shows it: from the ``renderCache`` when there, else read through
    /// the zone's catalog. Nil when no record has the name or its type is another.
    ///
    /// What the cache holds is current: ``catalog(_:_:)``, called first, takes in every save
    /// committed before this request, and the catalog's refresh drops what they changed
    /// before any other refresh returns (``forgetRendered(_:in:)``). The storage a record is
    /// read from holds every entry its log has. Only a file being opened (`keep`) adds to what
    /// is kept (its text and its stat): a listing of a large folder then does not fill the
    /// daemon's memory with texts nobody reads, nor push out the stats of the files being read.
    func renderedRecord(_ t: RecordTarget, keep: Bool) throws(FSError) -> RenderedRecord? {
        try render(t, keep: keep, catalog: try catalog(t.database, t.zone))
    }

    /// What `stat` and an open need of a record: kept when there, else from
    /// ``renderedRecord(_:keep:)``, current as its text is.
    func recordStat(_ t: RecordTarget) throws(FSError) -> RecordStat? {
        let cat = try catalog(t.database, t.zone)
        if let hit = renderCache.stat(t.ref) { return hit.type == t.type ? hit : nil }
        return try render(t, keep: false, catalog: cat)?.stat
    }

    /// ``renderedRecord(_:keep:)`` once the zone's catalog has taken in what was committed.
    func render(_ t: RecordTarget, keep: Bool, catalog cat: any ZoneCatalog) throws(FSError) -> RenderedRecord? {
        let (hit, generation) = renderCache.text(t.ref)
        if let hit {
            return hit.type == t.type ? hit : nil
        }
        let record: Record?
        if t.database.scope == .shared {
            record = try sharedRecord(named: t.name, t.database, t.zone, catalog: cat)
        } else {
            do throws(CKError) { record = try cat.record(named: t.name) } catch { throw error.fsError }
        }
        guard let record else { return nil }
        let made = RenderedRecord(record)
        if keep { renderCache.keep(made, as: t.ref, readAt: generation) }
        return made.type == t.type ? made : nil
    }

    /// Where an item shows in the mount, for messages and lost+found notes.
    func mountPath(_ target: ItemTarget) -> String {
        switch target {
        case .record(let t):
            let d = t.database
            let db = switch d.scope {
            case .public: "public"
            case .private: "private"
            case .shared: Self.sharedFolderName + "/" + (ownerFolderName(d.container, d.owner) ?? d.owner)
            }
            return "\(mountPoint)/\(d.container)/\(db)/\(StoreLayout.encode(t.zone))/\(t.type)/\(t.fileName)"
        case .keyValue(let ref, _):
            return "\(mountPoint)/\(ref.container)/\(Self.keyValueFolderName)/\(target.fileName)"
        }
    }
}

extension StoreView: FileSystemOperations {}
