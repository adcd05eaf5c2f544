@testable import CloudStore

// What the tests of the file backend look into, behind the storage seam.

extension Database {
    /// The zone's folder (the file backend's `ZoneStorage`).
    func zoneFolder(_ name: String) -> ZoneFolder {
        guard let folder = zoneStorage(name) as? ZoneFolder else { preconditionFailure("the store keeps its zones as folders") }
        return folder
    }

    /// The zone's folder in the store.
    func zoneDirectory(_ name: String) -> String { zoneFolder(name).directory }

    /// The zone's catalog as the file backend keeps it.
    func fileCatalog(_ name: String) -> ZoneFileCatalog { zoneFolder(name).fileCatalog() }
}

extension Store {
    /// The zone folders this store object opened, with the budgets they share.
    var zoneFolders: ZoneFolderTable {
        guard let files = backend as? FileStoreBackend else { preconditionFailure("the store keeps its zones as folders") }
        return files.zones
    }
    var cacheBudget: RecordCacheBudget { zoneFolders.cacheBudget }
    var openIndexFiles: OpenIndexFiles { zoneFolders.openIndexFiles }
    var feedBudget: RecordCacheBudget { zoneFolders.feedBudget }
}
