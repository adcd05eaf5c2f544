/// How a process reads a zone's records for queries and first change fetches.
public enum ZoneReading: Sendable, Equatable {
    /// Every record of a zone in memory from its first query on (`ZoneCatalog`), kept by
    /// following the log: the fastest answers for a process that answers many queries
    /// (`ckfs serve`, a program using the library), at the cost of memory that grows with the
    /// zone.
    case inMemory
    /// From the zone's index file and the record files it names: a process reads what it
    /// returns, not the zone (the CLI, which answers a few questions and exits, and the mount,
    /// whose memory must not grow with the zone). A query with `key == value` sorted on
    /// another field costs as many index lookups as records match, not as it returns. Each
    /// zone keeps up to 1,024 parsed records, all zones together up to 32 MiB of them.
    case indexed
    /// As ``indexed``, each zone keeping up to `cachedRecords` parsed records, all zones
    /// together up to 8 KiB a record: a server (`ckfs serve`) answers lookups of the records in
    /// use from memory, and its memory still has a bound that grows neither with the zone nor
    /// with the number of zones.
    case indexedCaching(cachedRecords: Int)

    /// How `ckfs serve` reads zones: from their index files, each keeping 16,384 parsed records,
    /// all together at most 128 MiB.
    public static let server = ZoneReading.indexedCaching(cachedRecords: 16_384)

    /// Whether queries and first change fetches read the zone's index file.
    public var readsIndex: Bool { self != .inMemory }

    /// The bytes of parsed records all zones of a store object keep together
    /// (``RecordCacheBudget``): 32 MiB for ``indexed``, 8 KiB a record for ``indexedCaching``
    /// (128 MiB for ``server``); ``inMemory`` has no such bound, its catalog holding every
    /// record of a zone anyway.
    var cacheBytes: Int {
        switch self {
        case .inMemory: Int.max
        case .indexed: 32 << 20
        case .indexedCaching(let n): max(n, 1) > Int.max / (8 << 10) ? Int.max : max(n, 1) * (8 << 10)
        }
    }

    /// The parsed records a zone's storage keeps, at most `configured`.
    func cachedRecords(_ configured: Int) -> Int {
        switch self {
        case .inMemory: configured
        case .indexed: min(configured, 1_024)
        case .indexedCaching(let n): min(configured, max(n, 1))
        }
    }
}
