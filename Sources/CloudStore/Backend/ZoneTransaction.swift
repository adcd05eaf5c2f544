/// A commit's view of its zone (``ZoneStorage/write(_:committed:)``): the zone as committed
/// so far, with no other commit to it until this one ends.
package protocol ZoneTransaction: AnyObject {
    var zoneID: ZoneID { get }
    /// The sequence number of the zone's last commit; this one will be the next.
    var lastSeq: Int64 { get }
    /// The bytes of records and assets the zone holds before this commit.
    var usage: Int64 { get }

    /// The zone's description.
    func readMeta() throws(CKError) -> ZoneMeta

    /// A record as committed so far; nil when there is none of that name.
    func record(_ name: String) throws(CKError) -> Record?

    /// The records that hold a `deleteSelf` reference to `name`.
    func referrers(of name: String) throws(CKError) -> [String]

    /// Stores the file at `path` as an asset of the zone, kept only if the commit names it.
    func storeAsset(from path: String) throws(CKError) -> Asset

    /// The size of the zone's asset with this checksum; nil when the zone holds none.
    func storedAssetSize(_ checksum: String) -> Int64?
}
