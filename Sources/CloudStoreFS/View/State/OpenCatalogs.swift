import CloudStore
import Synchronization

/// The zone catalogs the view has opened, by the zones that show them: a zone's owner and each
/// participant it is shared with see one catalog, the engine's one for the zone's folder.
///
/// A zone keeps the first catalog kept for it, until the zone is forgotten. Catalogs are loaded
/// outside this lock. Its lock is a leaf: a catalog's refresh, which may hold the engine's zone
/// locks, asks it which zones show the catalog.
final class OpenCatalogs: Sendable {
    private let byZone = Mutex<[StoreView.ZoneRef: any ZoneCatalog]>([:])

    func catalog(_ zone: StoreView.ZoneRef) -> (any ZoneCatalog)? {
        byZone.withLock { $0[zone] }
    }

    /// Keeps `catalog` for `zone` unless one is kept already; returns the one kept.
    func keep(_ catalog: any ZoneCatalog, for zone: StoreView.ZoneRef) -> any ZoneCatalog {
        byZone.withLock { byZone in
            if let kept = byZone[zone] { return kept }
            byZone[zone] = catalog
            return catalog
        }
    }

    func forget(_ zone: StoreView.ZoneRef) {
        byZone.withLock { _ = $0.removeValue(forKey: zone) }
    }

    /// Every zone with a catalog, for the change watcher.
    var zones: [StoreView.ZoneRef] { byZone.withLock { Array($0.keys) } }

    /// The zones that show `catalog`: its owner's, and each participant's view of it.
    func zones(showing catalog: any ZoneCatalog) -> [StoreView.ZoneRef] {
        byZone.withLock { $0.filter { $0.value === catalog }.map(\.key) }
    }
}
