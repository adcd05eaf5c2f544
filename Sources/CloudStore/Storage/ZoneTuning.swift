import Foundation

/// Tuning of the commit path; defaults suit most stores.
public struct ZoneTuning: Sendable {
    /// Sync record files and note a checkpoint after this many entries.
    public var checkpointEvery: Int64 = 4096
    /// Compact the log (keep the newer half) once it is larger than this.
    public var compactLogBytes: Int64 = 32 << 20
    /// Parsed records kept in memory per zone.
    public var cachedRecords: Int = 50_000
    /// Write record files on a background queue after the commit (true), or before the save
    /// returns (false). Either way the save is durable at its commit point.
    public var writeBehind = true
    /// Size of the zone's `journal`, where small commits are made durable without growing a
    /// file (see `ZoneFolder`); 0 makes every commit sync the log itself.
    public var journalBytes: Int64 = 128 << 10
    /// A batch with this many record files or more is written by two threads (`Int.max`:
    /// always one).
    public var parallelFilesFrom = 64
    /// Zones' index files a store object keeps open at once; past it, the one used longest ago
    /// is closed (its zone opens it again at its next use).
    public var openIndexFiles = 64
    /// Bytes of parsed log entries a store object keeps for its zones' catalogs, all zones
    /// together, so that an entry is parsed once in a process; past it, a catalog reads the
    /// entries from the log itself.
    public var keptEntryBytes = 16 << 20
    /// A query `key == value` sorted by a field makes a pair index of its key and sort in the
    /// zone's index file when the value matches at least this many records: fewer are found
    /// and sorted at each page for less than keeping the pair costs.
    public var pairIndexFromMatches = 4_096
    /// A zone's index that keeps its most pair indexes drops the one used longest ago for a new
    /// one when that one has not been used for this long (milliseconds). A query notes its
    /// use of a pair in the index at most every sixth of it, so a read rarely writes.
    public var pairIdleMilliseconds: Int64 = 3_600_000
    /// A zone's copy (`ckfs export`, `ckfs import`) reads its records this many at a time,
    /// on two threads a few pieces ahead of the copy's writing.
    public var copyRecordsPerPiece = 512
    /// A zone's copy reads its log this many bytes of whole lines at a time (more for one
    /// longer line), on a thread a piece ahead of the copy's writing.
    public var copyLogBytesPerPiece = 1 << 20
    public init() {}
}
