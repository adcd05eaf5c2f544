import Synchronization

/// The bytes of parsed records that all the zones of one store object keep in memory
/// together (each ``ZoneStorage``'s cache): however many zones a process reads, what it
/// keeps of their records has one bound.
///
/// A zone takes a record's cost before caching it and gives it back when the record leaves
/// its cache. Over the bound, a zone first drops some of its own records; if that does not
/// make room (the others hold the budget), it reads the record without keeping it. No zone
/// takes another's lock to evict, so the budget adds no lock order.
final class RecordCacheBudget: Sendable {
    /// The most bytes the caches may hold together.
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

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
    /// `Record`, its stamps, its dictionary slot and each field's entry take around them
    /// (measured: a record of four fields and 146 bytes of values took 1.5 KB of heap, one
    /// holding 4 KB more took 5.4 KB).
    static func cost(of record: Record) -> Int {
        record.size + record.recordID.recordName.utf8.count + 1_024 + 96 * record.fields.count
    }
}
