/// How a process reads a zone's records for queries and first change fetches.
public enum ZoneReading: Sendable {
    /// Every record of a zone in memory from its first query on (``ZoneCatalog``), kept by
    /// following the log: the fastest answers for a process that answers many queries
    /// (`ckfs serve`, a program using the library), at the cost of memory that grows with the
    /// zone.
    case inMemory
    /// From the zone's index file and the record files it names: a process reads what it
    /// returns, not the zone (the CLI, which answers a few questions and exits, and the mount,
    /// whose memory must not grow with the zone). A query with `key == value` sorted on
    /// another field costs as many index lookups as records match, not as it returns.
    case indexed
}
