import CloudStore
import Synchronization

/// Changes the zone catalogs took in that the kernel has not been told of yet. A catalog's
/// refresh adds to them, under the engine's zone locks; the view takes them all, in the order
/// they came, outside every lock and tells the kernel. A leaf lock.
final class PendingInvalidations: Sendable {
    private let changes = Mutex<[(StoreView.ZoneRef, ZoneCatalogChange)]>([])

    func add(_ taken: [(StoreView.ZoneRef, ZoneCatalogChange)]) {
        changes.withLock { $0 += taken }
    }

    /// Every change added since the last call, in the order they came; none are left.
    func takeAll() -> [(StoreView.ZoneRef, ZoneCatalogChange)] {
        changes.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
    }
}
