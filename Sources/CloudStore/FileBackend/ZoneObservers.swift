import Synchronization

/// What tests watch of one zone's storage: each read of its log, how each query answered from
/// its index found its page and what its walks cost, and each read of all its record files.
/// Each observer is called outside every lock of the storage. Apart from the storage's state:
/// its lock is its own, a leaf, taken alone.
final class ZoneObservers: Sendable {
    private struct Observers {
        var logRead: (@Sendable (Int) -> Void)?
        var queryPlan: (@Sendable (ZoneFolder.QueryPlan) -> Void)?
        var zoneRead: (@Sendable () -> Void)?
        var walkWork: (@Sendable (Int) -> Void)?
    }

    private let observers = Mutex(Observers())

    /// Told the size of every read of the log the opening makes: tests measure with it what a
    /// lookup reads, and whether under the writer's lock.
    var logRead: (@Sendable (Int) -> Void)? {
        get { observers.withLock { $0.logRead } }
        set { observers.withLock { $0.logRead = newValue } }
    }

    /// Told how each query answered from the index found its page: tests check with it that a
    /// plan is taken where it should be.
    var queryPlan: (@Sendable (ZoneFolder.QueryPlan) -> Void)? {
        get { observers.withLock { $0.queryPlan } }
        set { observers.withLock { $0.queryPlan = newValue } }
    }

    /// Told the work (SQLite's virtual machine steps) of each walk of the index in a sort
    /// key's order, and of each count of a value's matches that decides whether to make a
    /// pair: tests check with it that their cost does not grow with the zone.
    var walkWork: (@Sendable (Int) -> Void)? {
        get { observers.withLock { $0.walkWork } }
        set { observers.withLock { $0.walkWork = newValue } }
    }

    /// Told each time a read of every record file of the zone begins (the index made again,
    /// the zone loaded into memory).
    var zoneRead: (@Sendable () -> Void)? {
        get { observers.withLock { $0.zoneRead } }
        set { observers.withLock { $0.zoneRead = newValue } }
    }
}
