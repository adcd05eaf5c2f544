import Foundation
import Synchronization

/// A store directory: containers, their databases and zones, as plain files.
///
/// One `Store` object per process and directory is enough; it is safe to share between
/// threads, and several processes may open the same directory at once.
///
/// `@unchecked Sendable`: its only `var`, `containers`, is behind `lock`.
public final class Store: @unchecked Sendable {
    package let layout: StoreLayout
    public let settings: StoreSettings
    public let tuning: ZoneTuning
    /// How queries and first change fetches read a zone.
    public let reading: ZoneReading
    /// Where the store's state is kept, for what of it is behind the seam (``StoreBackend``).
    package let backend: any StoreBackend

    /// Guards `containers`.
    private let lock = NSLock()
    private var containers: [String: Container] = [:]

    private init(layout: StoreLayout, settings: StoreSettings, io: any StorageIO, tuning: ZoneTuning, reading: ZoneReading) {
        self.layout = layout
        self.settings = settings
        self.tuning = tuning
        self.reading = reading
        self.backend = FileStoreBackend(layout: layout, writer: FileWriter(io: io), settings: settings,
                                        zones: ZoneFolderTable(io: io, tuning: tuning, reading: reading))
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
        FileStoreBackend.ensureSpaceReserve(at: layout)
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

    /// Whether there is a store at `path`.
    public static func exists(at path: String) -> Bool {
        if case .success(_?) = Syscall.stat(StoreLayout(root: path).settingsFile) { return true }
        return false
    }

    /// The file backend of the store at `path`, to copy from, with its settings: opened
    /// without anything made or repaired on the way (no default container, no reserve of
    /// space), reading zones as the CLI does, keeping a bounded number of parsed records.
    /// `invalidArguments` when there is no store at `path`.
    package static func fileBackendToCopy(from path: String) throws(CKError) -> (any StoreBackend, StoreSettings) {
        guard exists(at: path) else {
            throw CKError(.invalidArguments, "no store at \(path) to import (its ckfs-store.json is missing); name the folder `ckfs export` wrote")
        }
        let layout = StoreLayout(root: path)
        let settings = try FileStoreBackend.settings(at: layout)
        return (fileBackend(layout, settings), settings)
    }

    /// A new store at `path` with `settings`, to copy into, opened as ``fileBackendToCopy(from:)``
    /// opens one: marked unfinished until the copy calls `finishCopy()`. A folder that holds
    /// anything is refused.
    package static func fileBackendToCopy(into path: String, settings: StoreSettings) throws(CKError) -> any StoreBackend {
        if case .success(let names?) = Syscall.listDirectory(path), !names.isEmpty {
            throw CKError(.invalidArguments, "\(path) is not empty; a copy makes a new store there, so name a folder that does not exist yet or is empty")
        }
        let layout = StoreLayout(root: path)
        _ = try FileStoreBackend.create(at: layout, settings: settings, writer: FileWriter(io: PosixIO()), unfinishedCopy: true)
        return fileBackend(layout, settings)
    }

    private static func fileBackend(_ layout: StoreLayout, _ settings: StoreSettings) -> any StoreBackend {
        let io = PosixIO()
        return FileStoreBackend(layout: layout, writer: FileWriter(io: io), settings: settings,
                                zones: ZoneFolderTable(io: io, tuning: settings.tuning, reading: .indexed))
    }

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

    /// Returns once every record file this store object's commits wrote behind is written
    /// (a save is durable before that, in its zone's log; this is for readers of the files
    /// themselves, such as a backup taken from inside the process). A process that exits
    /// normally does this on its way out.
    public func waitForRecordFiles() { backend.waitForWritesBehind() }

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
