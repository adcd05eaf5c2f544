/// How a process reads a zone's records for queries and first change fetches.
public enum ZoneReading: Sendable {
    /// Every record of a zone in memory from its first query on (``ZoneCatalog``), kept by
    /// following the log: the fastest answers for a process that answers many (the mount,
    /// `ckfs serve`), at the cost of memory that grows with the zone.
    case inMemory
    /// From the zone's index file and the record files it names: a process that answers a few
    /// questions and exits (the CLI) reads what it returns, not the zone.
    case indexed
}
