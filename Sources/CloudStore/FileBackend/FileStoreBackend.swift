import Synchronization

/// The file backend: a store as plain files in one folder (`StoreLayout`), written crash-safe
/// through `FileWriter`. What of the store is behind the seam is reached through it; the rest
/// is still read and written where it is used (``StoreBackend``).
final class FileStoreBackend: StoreBackend {
    let layout: StoreLayout
    let writer: FileWriter
    let settings: StoreSettings
    /// The zone folders this store object opened.
    let zones: ZoneFolderTable
    /// The one `SubscriptionFile` of each folder, which keeps the file as last parsed.
    private let subscriptionFiles = Mutex<[String: SubscriptionFile]>([:])
    /// The marks of the containers this object's copy is making, each open and `flock`ed
    /// until the copy finishes (`FileStoreBackend+CopyMarks`), by container.
    let copyLocks = Mutex<[String: Int32]>([:])

    init(layout: StoreLayout, writer: FileWriter, settings: StoreSettings, zones: ZoneFolderTable) {
        self.layout = layout
        self.writer = writer
        self.settings = settings
        self.zones = zones
    }

    deinit {
        for fd in copyLocks.withLock({ Array($0.values) }) { Syscall.close(fd) }
    }

    /// The database's folder: `zones/` in it holds a folder per zone.
    func databaseStorage(container: String, environment: Environment, scope: DatabaseScope, owner: String) -> any DatabaseStorage {
        ZoneFolders(directory: layout.databaseDirectory(container, environment, scope, user: owner), ownerName: owner, table: zones)
    }

    func waitForWritesBehind() { zones.waitForRecordFiles() }

    /// The reserve file at the store's root (``SpaceReserve``).
    func releaseSpaceReserve() -> Bool { SpaceReserve.release(layout) }

    /// Makes the reserve for deletes at the store's root if it is not there whole.
    static func ensureSpaceReserve(at layout: StoreLayout) { SpaceReserve.ensure(layout) }

    /// `keyvalue.plist` in the user's private folder of the environment.
    func keyValueStorage(container: String, environment: Environment, userRecordName: String) -> any KeyValueStorage {
        KeyValueFile(directory: layout.databaseDirectory(container, environment, .private, user: userRecordName), writer: writer,
                     limits: settings.keyValueLimits)
    }

    /// `subscriptions.json` in the database's folder, or in the user's folder of `shared/`.
    func subscriptionStorage(_ owner: SubscriptionOwner) -> any SubscriptionStorage {
        switch owner {
        case .database(let container, let environment, let scope, let ownerName):
            subscriptionFile(directory: layout.databaseDirectory(container, environment, scope, user: ownerName), ownerName: ownerName)
        case .sharedDatabase(let container, let environment, let user):
            subscriptionFile(directory: layout.sharedDatabaseDirectory(container, environment, user: user), ownerName: ZoneID.currentUserOwnerName)
        }
    }

    func subscriptionFile(directory: String, ownerName: String) -> SubscriptionFile {
        subscriptionFiles.withLock { files in
            if let f = files[directory] { return f }
            let f = SubscriptionFile(directory: directory, ownerName: ownerName, writer: writer)
            files[directory] = f
            return f
        }
    }

    /// The users with a folder in `shared/`: those who ever kept subscriptions of their shared
    /// database.
    func sharedDatabaseSubscribers(container: String, environment: Environment) -> [String] {
        guard case .success(let names?) = Syscall.listDirectory(layout.sharedDatabasesDirectory(container, environment)) else { return [] }
        return names.compactMap(StoreLayout.decode)
    }

    /// `notifications.jsonl` in the user's private folder of the environment.
    func notificationStorage(container: String, environment: Environment, userRecordName: String) -> any NotificationStorage {
        NotificationLog(directory: layout.databaseDirectory(container, environment, .private, user: userRecordName), writer: writer)
    }

    /// `shared-zones.json` in the environment's folder of the container's.
    func sharedZoneStorage(container: String, environment: Environment) -> any SharedZoneStorage {
        SharedZonesFile(directory: layout.containerDirectory(container) + "/" + environment.rawValue, writer: writer)
    }

    /// A watch of the zones' and key-value stores' folders (``FolderWatch``).
    func commitFeed<Target: Hashable & Sendable>(of target: Target.Type) -> any CommitFeed<Target> { FolderWatch<Target>() }

    /// `schema.json` in the container's folder.
    func schemaStorage(container: String) -> any SchemaStorage {
        SchemaFile(path: layout.schemaFile(container), writer: writer)
    }

    /// The store's settings, `ckfs-store.json`; `badDatabase` when there is no store at `layout`.
    static func settings(at layout: StoreLayout) throws(CKError) -> StoreSettings {
        if isMarked(layout.root) {
            throw CKError(.badDatabase, "\(layout.root) is a copy that did not finish: the `ckfs export` or `ckfs import` making it stopped before the end (\(copyMark(in: layout.root)) says so); remove the folder and run it again")
        }
        guard let bytes = try Syscall.readFile(layout.settingsFile).orThrow(.internalError, "cannot read \(layout.settingsFile)") else {
            throw CKError(.badDatabase, "no store at \(layout.root); create one with `ckfs init --store \(layout.root)`")
        }
        do { return StoreSettings(json: try JSONParser.parse(bytes)) } catch {
            throw CKError(.badDatabase, "\(layout.settingsFile) is not valid JSON; fix it or restore it from a backup", cause: .syntax(error))
        }
    }

    /// Makes the store's folder and its settings file, durably; false when a store is there
    /// already (its settings are kept). `unfinishedCopy` marks the store a copy that is not
    /// whole yet, before its settings file is written.
    static func create(at layout: StoreLayout, settings: StoreSettings, writer: FileWriter, unfinishedCopy: Bool = false) throws(CKError) -> Bool {
        if case .success(_?) = Syscall.stat(layout.settingsFile) { return false }
        try writer.makeDirectories(layout.root)
        if unfinishedCopy { try mark(layout.root, writer: writer, saying: "a copy into this store has not finished") }
        try writer.replace(layout.settingsFile, with: JSONWriter.pretty(settings.json()), durable: true)
        return true
    }

    /// The folders of the store's root named as containers are (`iCloud.…`).
    func containerIdentifiers() throws(CKError) -> [String] {
        let names = try Syscall.listDirectory(layout.root).orThrow(.internalError, "cannot list \(layout.root)") ?? []
        return names.filter { $0.hasPrefix("iCloud.") }.sorted()
    }

    /// `container.json` in the container's folder.
    func containerStorage(container: String) -> any ContainerStorage {
        ContainerFile(identifier: container, directory: layout.containerDirectory(container), path: layout.containerFile(container),
                      writer: writer, defaults: settings)
    }
}
