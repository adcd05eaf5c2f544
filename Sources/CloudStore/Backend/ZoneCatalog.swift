/// One zone as a reader that lists it again and again sees it (the FUSE view, queries),
/// brought up to date by ``refresh()``, which says what changed since the last look. One per
/// zone for a store object (``ZoneStorage/catalog()``), shared by every reader in the process.
package protocol ZoneCatalog: AnyObject, Sendable {
    var zoneName: String { get }

    /// Takes in what was committed since the last look, and tells every listener of it before
    /// any other refresh can return. A change another refresh took in is not reported again,
    /// so a reader that keeps what it read listens.
    @discardableResult
    func refresh() throws(CKError) -> ZoneCatalogChange

    /// Has `listener` told of every change any refresh of this catalog takes in, under the
    /// refresh's lock: it must take no lock the refreshing thread may hold, nor refresh. One
    /// listener per `id`; false when `id` listens already.
    @discardableResult
    func listen(as id: UInt64, _ listener: @escaping @Sendable (ZoneCatalogChange) -> Void) -> Bool

    /// The record named `name`, as of the last refresh or newer.
    func record(named name: String) throws(CKError) -> Record?

    /// Names of the records of one type, sorted.
    func names(ofType type: String) throws(CKError) -> [String]

    /// Whether any record has this type.
    func hasRecords(ofType type: String) throws(CKError) -> Bool

    /// The record types that have at least one record, sorted.
    func recordTypes() throws(CKError) -> [String]

    /// Every record of the zone.
    func allRecords() throws(CKError) -> [Record]

    /// Whether the catalog holds the zone's records in memory.
    var holdsRecords: Bool { get }

    /// The sequence number of the newest commit taken in.
    var sequence: Int64 { get }
}

/// What one ``ZoneCatalog/refresh()`` found.
package enum ZoneCatalogChange: Sendable, Equatable {
    /// Nothing new.
    case none
    /// These records were saved or deleted: name → record type.
    case records([String: String])
    /// The catalog was loaded again (first look, or the history was compacted past what the
    /// catalog had seen): any record may have changed.
    case reloaded
    /// The zone no longer exists.
    case zoneGone
}
