import Dispatch
import Synchronization

/// What keeps parsed records within a ``RecordCacheBudget`` (a zone's storage, or its feed of
/// log entries), asked to let some go when it has not used them lately and other zones want
/// room.
protocol RecordCacheHolder: AnyObject, Sendable {
    /// Lets go of some of what it keeps (a storage half its records, a feed all its entries)
    /// when it used none of it since the last ask; otherwise only notes that it was asked.
    func shedIfIdle()
}

/// The bytes of parsed records that all the zones of one store object keep in memory
/// together (each ``ZoneFolder``'s cache): however many zones a process reads, what it
/// keeps of their records has one bound.
///
/// A zone takes a record's cost before caching it and gives it back when the record leaves
/// its cache. Over the bound, a zone first drops some of its own records; if that does not
/// make room (the others hold the budget), it reads the record without keeping it and says it
/// wanted room. Then, after its own lock is let go, ``relieve(except:)`` asks the other zones
/// to let go of half their records if they used none since they were last asked (CLOCK over
/// zones), at most every 50 ms and 256 zones an ask, taken in turn: the zones read lately get
/// the room, where the first zones read kept it for as long as the process ran. A zone's lock
/// is taken alone, never under another's or under the budget's, so the budget adds no lock
/// order.
final class RecordCacheBudget: Sendable {
    /// The most bytes the caches may hold together.
    let limit: Int
    private let used = Atomic<Int>(0)
    private let wanted = Atomic<Bool>(false)
    /// When the zones were last asked for room (``DispatchTime`` nanoseconds).
    private let lastAsked = Atomic<UInt64>(0)
    private let registry = Mutex(Registry())

    /// The zones registered, and the one the next ask begins with.
    private struct Registry {
        var holders: [Holder] = []
        var next = 0
    }

    private struct Holder {
        weak var holder: (any RecordCacheHolder)?
    }

    /// The least time between two asks of the zones for room.
    static let askEvery: UInt64 = 50_000_000
    /// The most zones one ask reaches: a process that has read many zones does not visit
    /// them all every 50 ms.
    static let askedAtOnce = 256

    init(limit: Int) { self.limit = limit }

    /// Notes a zone whose records count against this budget, to be asked for room.
    func register(_ holder: any RecordCacheHolder) {
        registry.withLock { $0.holders.append(Holder(holder: holder)) }
    }

    /// Notes that a zone found no room for a record.
    func want() { wanted.store(true, ordering: .relaxed) }

    /// When a zone found no room since the last ask, and the last was 50 ms ago or more: asks
    /// the next zones in turn but `asker` to let go of what they have not used
    /// (``RecordCacheHolder``). Called with no zone's lock held.
    func relieve(except asker: any RecordCacheHolder) {
        guard wanted.load(ordering: .relaxed) else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let last = lastAsked.load(ordering: .relaxed)
        guard now &- last >= Self.askEvery,
              lastAsked.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else { return }
        wanted.store(false, ordering: .relaxed)
        let others = registry.withLock { r -> [any RecordCacheHolder] in
            var out: [any RecordCacheHolder] = []
            var sawGone = false
            for _ in 0..<min(Self.askedAtOnce, r.holders.count) {
                if r.next >= r.holders.count { r.next = 0 }
                if let holder = r.holders[r.next].holder {
                    if holder !== asker { out.append(holder) }
                } else {
                    sawGone = true
                }
                r.next += 1
            }
            // Zones let go leave the turn, all at once (zones seldom go).
            if sawGone { r.holders.removeAll { $0.holder == nil } }
            return out
        }
        for holder in others { holder.shedIfIdle() }
    }

    /// Takes `bytes` when they fit under the limit; whether they did.
    func take(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current <= limit - bytes else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back what a record that left a cache took.
    func give(_ bytes: Int) { used.subtract(bytes, ordering: .relaxed) }

    /// The bytes the caches hold now.
    var inUse: Int { used.load(ordering: .relaxed) }

    /// What keeping `record` parsed is taken to cost: its fields' bytes and name, and what the
    /// `Record`, its stamps, its dictionary slot and each field's entry take around them: the
    /// constants are the heap a parsed record takes beyond its values' bytes.
    static func cost(of record: Record) -> Int {
        record.size + record.recordID.recordName.utf8.count + 1_024 + 96 * record.fields.count
    }
}
