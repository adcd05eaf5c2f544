import Foundation
import Synchronization

/// A store directory: containers, their databases and zones, as plain files.
///
/// One `Store` object per process and directory is enough; it is safe to share between
/// threads, and several processes may open the same directory at once.
public final class Store: @unchecked Sendable {
    package let layout: StoreLayout
    public let settings: StoreSettings
    let io: any StorageIO
    let writer: FileWriter
    public let tuning: ZoneTuning
    /// How queries and first change fetches read a zone.
    public let reading: ZoneReading
    /// The bytes of parsed records the zones of this store object keep together.
    let cacheBudget: RecordCacheBudget
    /// The zones' index files this store object keeps open together.
    let openIndexFiles: OpenIndexFiles
    /// The bytes of parsed log entries the zones of this store object keep for their catalogs.
    let feedBudget: RecordCacheBudget
    /// Where the store's state is kept, for what of it is behind the seam (``StoreBackend``).
    package let backend: any StoreBackend

    /// Guards `zones`, `catalogs`, `containers`, `listings` and `zoneNameLists`.
    private let lock = NSLock()
    private var zones: [String: ZoneStorage] = [:]
    private var catalogs: [String: ZoneCatalog] = [:]
    private var containers: [String: Container] = [:]
    /// The entries of folders listed by ``listing(of:)``, with the folder's status then.
    private var listings: [String: (status: Syscall.FileStatus, names: [String])] = [:]
    /// A zones folder's listing and the zone names it gives, so a save's quota check does not
    /// decode and sort them again while the folder is unchanged.
    private var zoneNameLists: [String: (listing: [String], names: [String])] = [:]

    private init(layout: StoreLayout, settings: StoreSettings, io: any StorageIO, tuning: ZoneTuning, reading: ZoneReading) {
        self.layout = layout
        self.settings = settings
        self.io = io
        self.writer = FileWriter(io: io)
        self.tuning = tuning
        self.reading = reading
        self.cacheBudget = RecordCacheBudget(limit: reading.cacheBytes)
        self.openIndexFiles = OpenIndexFiles(limit: tuning.openIndexFiles)
        self.feedBudget = RecordCacheBudget(limit: tuning.keptEntryBytes)
        self.backend = FileStoreBackend(layout: layout, writer: writer, settings: settings)
    }

    /// Opens the store at `path`; fails with a hint when there is none.
    /// `tuning` overrides the store's settings (tests use it).
    public static func open(at path: String, tuning: ZoneTuning? = nil, reading: ZoneReading = .inMemory) throws(CKError) -> Store {
        try open(at: path, io: PosixIO(), tuning: tuning, reading: reading)
    }

    /// Opens the store at `path`, doing its file I/O through `io` (tests give one that fails).
    package static func open(at path: String, io: any StorageIO, tuning: ZoneTuning? = nil,
                             reading: ZoneReading = .inMemory) throws(CKError) -> Store {
        let layout = StoreLayout(root: path)
        let settings = try FileStoreBackend.settings(at: layout)
        SpaceReserve.ensure(layout)
        Syscall.raiseOpenFileLimit()
        return Store(layout: layout, settings: settings, io: io, tuning: tuning ?? settings.tuning, reading: reading)
    }

    /// Creates the store at `path` (harmless when it exists: its settings are kept).
    @discardableResult
    public static func create(at path: String, settings: StoreSettings = StoreSettings(), tuning: ZoneTuning? = nil,
                              reading: ZoneReading = .inMemory) throws(CKError) -> Store {
        try create(at: path, settings: settings, io: PosixIO(), tuning: tuning, reading: reading)
    }

    /// Creates the store at `path`, doing its file I/O through `io` (tests give one that fails).
    @discardableResult
    package static func create(at path: String, settings: StoreSettings = StoreSettings(), io: any StorageIO, tuning: ZoneTuning? = nil,
                               reading: ZoneReading = .inMemory) throws(CKError) -> Store {
        let layout = StoreLayout(root: path)
        guard try FileStoreBackend.create(at: layout, settings: settings, writer: FileWriter(io: io)) else {
            return try open(at: path, io: io, tuning: tuning, reading: reading)
        }
        Syscall.raiseOpenFileLimit()
        let store = Store(layout: layout, settings: settings, io: io, tuning: tuning ?? settings.tuning, reading: reading)
        _ = try store.container(settings.defaultContainer)
        return store
    }

    func ensureDirectory(_ path: String) throws(CKError) { try writer.makeDirectories(path) }

    /// The container with this identifier, made on first use; nil means the default.
    public func container(_ identifier: String? = nil) throws(CKError) -> Container {
        let id = identifier ?? settings.defaultContainer
        try Names.checkContainerIdentifier(id)
        if let c = lock.withLock({ containers[id] }) { return c }
        let c = try Container(store: self, identifier: id)
        return lock.withLock {
            if let existing = containers[id] { return existing }
            containers[id] = c
            return c
        }
    }

    /// Container identifiers present in the store.
    public func containerIdentifiers() throws(CKError) -> [String] { try backend.containerIdentifiers() }

    /// The one `ZoneStorage` of a zone directory in this process.
    func zoneStorage(directory: String, zoneID: ZoneID) -> ZoneStorage {
        lock.withLock {
            if let z = zones[directory] { return z }
            let z = ZoneStorage(directory: directory, zoneID: zoneID, io: io, tuning: tuning, reading: reading, budget: cacheBudget,
                                openIndexFiles: openIndexFiles, feedBudget: feedBudget)
            zones[directory] = z
            return z
        }
    }

    /// Returns once every record file this store object's commits wrote behind is written
    /// (a save is durable before that, in its zone's log; this is for readers of the files
    /// themselves, such as a backup taken from inside the process). A process that exits
    /// normally does this on its way out.
    public func waitForRecordFiles() {
        for z in lock.withLock({ Array(zones.values) }) { z.waitForFiles() }
    }

    func forgetZone(directory: String) {
        lock.withLock {
            zones[directory] = nil
            catalogs[directory] = nil
        }
    }

    /// The one shared ``ZoneCatalog`` of a zone directory for this store object.
    func catalog(directory: String, make: () -> ZoneCatalog) -> ZoneCatalog {
        if let c = lock.withLock({ catalogs[directory] }) { return c }
        let made = make()
        return lock.withLock {
            if let c = catalogs[directory] { return c }
            catalogs[directory] = made
            return made
        }
    }

    /// The names in a folder, listed again only when its inode or times changed (adding or
    /// removing an entry changes them). Every save listed its database's zones for the quota
    /// check: five system calls where one stat now tells. Nil when there is no folder.
    ///
    /// File times are coarse (a clock tick), so two changes within one tick can leave the
    /// same times: a listing is kept only when the folder's last change was well before it
    /// was taken (as git does with its index). "Well before" is two seconds where the times
    /// are whole seconds (a file system without finer ones, or one that rounds to two), and
    /// 50 ms where they have a fraction (a tick is 10 ms at most): a save right after a store
    /// is made (as in `ckfs bench`) then lists the folder only for its first 50 ms.
    func listing(of directory: String) throws(CKError) -> [String]? {
        guard let st = try Syscall.stat(directory, times: true).orThrow(.internalError, "cannot stat \(directory)") else {
            lock.withLock { listings[directory] = nil }
            return nil
        }
        if let hit = lock.withLock({ listings[directory] }), hit.status == st { return hit.names }
        let listedAt = Int64(Date().timeIntervalSince1970 * 1e9)
        guard let names = try Syscall.listDirectory(directory).orThrow(.internalError, "cannot list \(directory)") else { return nil }
        let changed = max(st.modifiedNanos, st.changedNanos)
        let margin: Int64 = changed % 1_000_000_000 == 0 ? 2_000_000_000 : 50_000_000
        let settled = listedAt - changed > margin
        lock.withLock { listings[directory] = settled ? (st, names) : nil }
        return names
    }

    /// The zones in a database's `zones` folder, by name, sorted.
    func zoneNames(in directory: String) throws(CKError) -> [String] {
        let listing = try listing(of: directory) ?? []
        // The same listing is the same array (its storage is shared): compared in O(1).
        if let hit = lock.withLock({ zoneNameLists[directory] }), hit.listing == listing { return hit.names }
        let names = listing.filter { !$0.hasPrefix(".") }.compactMap(StoreLayout.decode).sorted()
        lock.withLock { zoneNameLists[directory] = (listing, names) }
        return names
    }


    /// Where a store lives when none is named: `CKFS_STORE`, else `$XDG_DATA_HOME/ckfs`, else
    /// `~/.local/share/ckfs`.
    public static var defaultPath: String {
        let overridden = environmentForTests.withLock { $0 }
        func value(_ name: String) -> String? {
            if let overridden { return overridden[name] }
            return Syscall.environmentValue(name)
        }
        if let s = value("CKFS_STORE"), !s.isEmpty { return s }
        if let x = value("XDG_DATA_HOME"), !x.isEmpty { return x + "/ckfs" }
        return (value("HOME") ?? NSHomeDirectory()) + "/.local/share/ckfs"
    }

    /// The environment ``defaultPath`` reads in place of the process's, set by tests: a
    /// `setenv` while another thread starts a process can crash it (Foundation's `Process.run`
    /// copies the environment that `setenv` may free meanwhile).
    static let environmentForTests = Mutex<[String: String]?>(nil)

    /// Milliseconds since 1970, as record timestamps hold them.
    public static func now() -> Int64 { Clock.milliseconds() }
}
