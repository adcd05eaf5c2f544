/// What a backend keeps of one database: its zones. One per database and owner (the public
/// database, one user's private database); a shared database reaches its owner's.
package protocol DatabaseStorage: Sendable {
    /// The names of the database's zones, sorted.
    func zoneNames() throws(CKError) -> [String]

    /// The zone named `name`, which may not exist (``ZoneStorage/exists``); the same object
    /// for the same zone while the store is open, so what it keeps in memory is shared.
    func zone(_ name: String) -> any ZoneStorage

    /// Makes a zone described by `meta`, durably; false when one of that name exists.
    func createZone(_ meta: ZoneMeta) throws(CKError) -> Bool

    /// Makes a zone described by `meta` whole from a snapshot of another store's: `body` gives
    /// its history, records and assets, and the zone appears, atomically, once it returns,
    /// with `lastSeq` as its last commit and `usage` as its usage. A zone of that name already
    /// there is refused (`invalidArguments`), and a failure leaves no zone.
    func restoreZone(_ meta: ZoneMeta, lastSeq: Int64, usage: Int64, _ body: (any ZoneRestore) throws(CKError) -> Void) throws(CKError)

    /// Deletes a zone and everything in it, atomically: its records, history and assets.
    /// The next ``zone(_:)`` of the name is another zone.
    func deleteZone(_ name: String) throws(CKError)

    /// Bytes of records and assets in every zone of the database but `zone` (nil: in all):
    /// what a commit to `zone` adds its own usage to, for the quota.
    func usage(excluding zone: String?) throws(CKError) -> Int64
}
