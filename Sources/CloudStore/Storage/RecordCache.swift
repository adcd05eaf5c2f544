/// The parsed records one opening of a zone keeps (``ZoneStorage``): at most `limit` of
/// them, within the bytes the store object's zones share (``RecordCacheBudget``). A value,
/// guarded by the storage's `stateLock`.
struct RecordCache {
    private var records: [String: Record] = [:]
    /// What the records kept took from `budget`.
    private(set) var bytes = 0
    let budget: RecordCacheBudget
    /// The most records kept.
    let limit: Int

    init(budget: RecordCacheBudget, limit: Int) {
        self.budget = budget
        self.limit = max(limit, 1)
    }

    subscript(name: String) -> Record? { records[name] }

    var isEmpty: Bool { records.isEmpty }

    /// Keeps `record`, in place of any version of it kept. Past the count, an eighth of the
    /// records go; over the shared bytes, an eighth of this zone's first, and when the other
    /// zones hold the budget, `record` is not kept.
    mutating func insert(_ record: Record) {
        let name = record.recordID.recordName
        remove(name)
        if records.count >= limit { drop(max(1, limit / 8)) }
        let cost = RecordCacheBudget.cost(of: record)
        if !budget.take(cost) {
            drop(max(1, records.count / 8))
            guard budget.take(cost) else { return }
        }
        records[name] = record
        bytes += cost
    }

    /// Takes a record out, giving back its bytes.
    mutating func remove(_ name: String) {
        guard let old = records.removeValue(forKey: name) else { return }
        let cost = RecordCacheBudget.cost(of: old)
        bytes -= cost
        budget.give(cost)
    }

    /// Takes every record out, giving back their bytes.
    mutating func removeAll() {
        records = [:]
        budget.give(bytes)
        bytes = 0
    }

    /// Drops `count` records, in the dictionary's (arbitrary) order: cheap and good enough.
    /// The names are copied out first: removing while the keys view holds the storage copied
    /// the whole dictionary.
    private mutating func drop(_ count: Int) {
        for key in Array(records.keys.prefix(count)) { remove(key) }
    }
}
