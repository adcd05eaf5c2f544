import Synchronization

/// The zones' index files one store object keeps open: at most ``limit``, the least recently
/// used let go when another is opened. An open index holds SQLite's page cache (about 100 KB
/// once a zone has been listed), three descriptors and the WAL's shared memory, so a process
/// that reads zone after zone (the mount, the server) grew by that with every zone it had
/// read. A zone whose index was let go opens it again at its next use; a thread using it
/// meanwhile keeps its connection until it is done.
///
/// Its lock is its own, a leaf: a slot's lock is never taken under it, and it is never taken
/// under a slot's.
final class OpenIndexFiles: Sendable {
    /// The index files kept open at once.
    let limit: Int
    /// Stamps each use of an index (``ZoneIndexSlot``), so the least recently used is known.
    private let clock = Atomic<UInt64>(0)
    private let open = Mutex<[ObjectIdentifier: Entry]>([:])

    private struct Entry {
        weak var slot: ZoneIndexSlot?
    }

    init(limit: Int) { self.limit = max(limit, 1) }

    /// A stamp later than every one given before.
    func tick() -> UInt64 { clock.add(1, ordering: .relaxed).newValue }

    /// Notes that `slot` holds an open index; lets go of the least recently used others past
    /// the limit.
    func opened(_ slot: ZoneIndexSlot) {
        let letGo = open.withLock { open -> [(ZoneIndexSlot, UInt64)] in
            open[ObjectIdentifier(slot)] = Entry(slot: slot)
            guard open.count > limit else { return [] }
            open = open.filter { $0.value.slot != nil }
            guard open.count > limit else { return [] }
            let others = open.values.compactMap(\.slot).filter { $0 !== slot }.map { ($0, $0.lastUse) }
            let oldest = others.sorted { $0.1 < $1.1 }.prefix(open.count - limit)
            for (s, _) in oldest { open[ObjectIdentifier(s)] = nil }
            return Array(oldest)
        }
        for (s, stamp) in letGo { s.letGo(unusedSince: stamp) }
    }

    /// Notes that `slot` holds no index.
    func closed(_ slot: ZoneIndexSlot) {
        open.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(slot)) }
    }

    /// How many slots hold an open index, as noted.
    var count: Int { open.withLock { $0.values.filter { $0.slot != nil }.count } }
}
