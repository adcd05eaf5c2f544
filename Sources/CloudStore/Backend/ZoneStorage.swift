import Foundation

/// What a backend keeps of one zone: its records, its history of commits (the change log,
/// whose sequence numbers are change tags and change tokens), its assets, what queries need,
/// and the zone's description (`ZoneMeta`). Every operation is one round trip's work and
/// none reads the whole zone, but ``recordNames()``, which tools that list a zone ask for.
///
/// A commit is ``write(_:committed:)``: the body sees the zone as committed so far, with no
/// other commit to the zone in between, through a ``ZoneTransaction``, and returns the log
/// entry to commit; the entry is durable when `write` returns.
package protocol ZoneStorage: AnyObject, Sendable {
    var zoneID: ZoneID { get }

    /// Whether the zone exists (it may have been deleted since this object was made).
    var exists: Bool { get }

    /// The zone's description; `zoneNotFound` when there is no zone.
    func readMeta() throws(CKError) -> ZoneMeta

    /// The zone's last commit: its sequence number (the zone's change token, within its
    /// epoch) and the zone's usage after it; nil when there is no zone.
    func lastCommit() throws(CKError) -> ZoneCommitPoint?

    /// A record as last committed; nil when there is none of that name.
    func record(named name: String) throws(CKError) -> Record?

    /// How many records the zone holds.
    func recordCount() throws(CKError) -> Int

    /// The name of every record, for tools that list the whole zone.
    func recordNames() throws(CKError) -> [String]

    /// The whole entries after `seq`, until they hold `limit` record changes (nil: to the
    /// end), with the client change token as of the last; nil when the history no longer
    /// reaches back to `seq` (the token expired). `meta` is the zone's description as the
    /// caller read it before.
    func history(after seq: Int64, changeLimit limit: Int?, meta: ZoneMeta) throws(CKError) -> HistoryPage?

    /// The client change token of the last commit up to `seq` that gave one.
    func clientChangeToken(upTo seq: Int64, meta: ZoneMeta) throws(CKError) -> Data?

    /// One page of a first change fetch begun at commit `seq`: at most `limit` record names
    /// after `after`, in name order, and whether more follow. A record saved since `seq` may
    /// come here and again in the changes after `seq`.
    func firstFetchNames(epoch: String, startedAt seq: Int64, after: String?, limit: Int?) throws(CKError) -> (names: ArraySlice<String>, more: Bool)

    /// The entry of commit `seq`, when the history still holds it.
    func loggedEntry(seq: Int64) throws(CKError) -> LogEntry?

    /// Commits atomically: `body` sees the zone as committed so far and returns the entry to
    /// commit (nil commits nothing) with its result; `committed` runs after the commit, the
    /// zone still held, with the entry as committed (its sequence number set).
    func write<T>(_ body: (any ZoneTransaction) throws(CKError) -> (LogEntry?, T),
                  committed: ((LogEntry) -> Void)?) throws(CKError) -> T

    /// At most `limit` records of `query` after `after`, in the query's order, and whether
    /// more remain. `types` are the types of the fields the query names, as the schema says.
    func page(of query: RecordQuery, types: [String: FieldType], limit: Int, after: CursorPosition?) throws(CKError) -> QueryPage

    /// A local file holding the bytes of the zone's asset with this checksum, to read or to
    /// hand to what takes a file (a receipt that copies it into another zone); nil when the
    /// zone holds no such asset. The file backend's is its own file; another backend's, a
    /// copy it makes in its ``assetFolder(holding:)``.
    func assetFile(_ checksum: String) throws(CKError) -> String?

    /// A local folder where the zone's assets are files named by their checksums, holding
    /// at least those of `checksums` (the CloudKit module's records give their `CKAsset`
    /// files from there).
    func assetFolder(holding checksums: [String]) throws(CKError) -> String

    /// Runs `body` with the zone as of its last commit, no commit coming in between.
    func snapshot<T>(_ body: (any ZoneSnapshot) throws(CKError) -> T) throws(CKError) -> T

    /// The zone as a reader that looks at it again and again sees it (``ZoneCatalog``): one
    /// per zone for the store object, shared by everything in the process that reads it.
    func catalog() -> any ZoneCatalog
}

/// A zone's last commit: its sequence number, and the bytes of records and assets the zone
/// holds after it.
package struct ZoneCommitPoint: Sendable, Equatable {
    package var seq: Int64
    package var usage: Int64

    package init(seq: Int64, usage: Int64) {
        self.seq = seq
        self.usage = usage
    }
}

/// A stretch of a zone's history.
package struct HistoryPage {
    /// The whole entries after the number asked for, in order.
    package var entries: [LogEntry]
    /// Whole entries follow the last one given.
    package var moreComing: Bool
    /// The client change token of the last entry, up to the page's last, that gave one; the
    /// zone's own when the history holds none.
    package var clientChangeToken: Data?

    package init(entries: [LogEntry], moreComing: Bool, clientChangeToken: Data?) {
        self.entries = entries
        self.moreComing = moreComing
        self.clientChangeToken = clientChangeToken
    }
}
