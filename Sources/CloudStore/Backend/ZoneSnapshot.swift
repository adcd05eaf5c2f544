/// Everything a zone holds as of one commit, for a copy of the zone to another store
/// (`ckfs export`, `ckfs import`): its description, the history its live change tokens need,
/// every record and every asset. Read while no commit to the zone can come in between
/// (``ZoneStorage/snapshot(_:)``), one record at a time.
package protocol ZoneSnapshot: AnyObject {
    /// The zone's description; its epoch is part of every change token of the zone.
    var meta: ZoneMeta { get }
    /// The sequence number of the last commit: the zone's change token, within its epoch.
    var lastSeq: Int64 { get }
    /// The bytes of records and assets the zone holds.
    var usage: Int64 { get }

    /// The entries of the zone's kept history, in order: every one a live change token, a
    /// change tag or a client change token may need.
    func forEachEntry(_ body: (LogEntry) throws(CKError) -> Void) throws(CKError)

    /// Every record, in name order.
    func forEachRecord(_ body: (Record) throws(CKError) -> Void) throws(CKError)

    /// Every asset the zone holds: its checksum and a local file with its bytes.
    func forEachAsset(_ body: (_ checksum: String, _ file: String) throws(CKError) -> Void) throws(CKError)
}

/// A zone being restored whole from a snapshot (``DatabaseStorage/restoreZone(_:lastSeq:usage:_:)``):
/// its history, records and assets are given in the snapshot's order, and the zone appears,
/// atomically, only when all of it is in.
package protocol ZoneRestore: AnyObject {
    /// Appends the next entry of the history (entries come in order, as the snapshot kept them).
    func addEntry(_ entry: LogEntry) throws(CKError)
    /// Adds a record as of the snapshot's last commit.
    func addRecord(_ record: Record) throws(CKError)
    /// Adds an asset: `file` holds its bytes, whose SHA-256 must be `checksum`.
    func addAsset(checksum: String, file: String) throws(CKError)
}
