/// What only a committing writer of one zone storage touches: the log it keeps open for
/// appends, the journal as it last left it, the fence after a failed sync, the checkpoint it
/// last saw. Guarded by the storage's `writeLock`, which a writer holds across the whole
/// commit, its I/O included; so it is a value beside that lock, not a `Mutex` of its own.
struct ZoneWriterState {
    /// The log, kept open for appends between commits, with the inode it was opened at: a log
    /// replaced since (compaction, another process's recovery) is opened again.
    var appendLog: (fd: Int32, inode: UInt64)?
    /// The journal as this process last left it (``ZoneFolder/Journal``).
    var journal: ZoneFolder.Journal?
    /// Why the zone is closed to writers until the store is opened again (a failed sync, a
    /// damaged log): after a failed `fdatasync` the kernel may have dropped the pages it could
    /// not write, so nothing more is appended behind them.
    var fenced: CKError?
    /// The checkpoint `zone.json` last showed this process (-1: not read yet). Other
    /// processes may move it on; a stale value only makes the next checkpoint come early.
    var knownCheckpointSeq: Int64 = -1
}
