/// The view a write transaction has of its zone folder, with the zone's locks held.
final class ZoneFolderTransaction: ZoneTransaction {
    let storage: ZoneFolder
    let lastSeq: Int64
    let usage: Int64
    /// The index file as ``referrers(of:)`` first found it (nil inside: none usable).
    private var indexForReferrers: ZoneIndexFile??

    init(storage: ZoneFolder, lastSeq: Int64, usage: Int64) {
        self.storage = storage
        self.lastSeq = lastSeq
        self.usage = usage
    }

    var zoneID: ZoneID { storage.zoneID }

    func readMeta() throws(CKError) -> ZoneMeta { try storage.readMeta() }

    /// The record as committed so far (the writer's lock is held, the log taken in).
    func record(_ name: String) throws(CKError) -> Record? { try storage.currentRecord(named: name, underWriteLock: true) { true } }

    /// Records holding a `deleteSelf` reference to `name`: from the index file, brought up to
    /// the last commit, when the process reads zones that way and has not built the edges in
    /// memory; else from the edges in memory (built from every record file once).
    func referrers(of name: String) throws(CKError) -> [String] {
        if storage.reading.readsIndex, storage.state.withLock({ $0.deleteSelfEdges == nil }) {
            // Brought up to date once a transaction: no other writer commits while it runs.
            if indexForReferrers == nil { indexForReferrers = .some(storage.currentIndex()) }
            if let index = indexForReferrers ?? nil {
                do throws(CKError) {
                    return try index.read { (reader) throws(CKError) in try reader.referrers(of: name) }
                } catch where ZoneFolder.isDamage(error) {
                    // Damaged where this read went: removed (the next reader makes it again),
                    // and the edges are read from the record files for the rest of the transaction.
                    storage.removeDamagedIndexFiles(error)
                    indexForReferrers = .some(nil)
                }
            }
        }
        return try storage.withDeleteSelfEdges { $0.referrers[name].map { Array($0) } ?? [] }
    }

    /// Checksums of the asset files this transaction made (not those it found there already).
    private(set) var createdAssets: Set<String> = []

    /// Stores the file at `path` as an asset of the zone; noted when its file is new.
    func storeAsset(from path: String) throws(CKError) -> Asset {
        let (asset, created) = try storage.storeAsset(from: path)
        if created { createdAssets.insert(asset.fileChecksum) }
        return asset
    }

    /// The size of the zone's asset file `checksum`; nil when the zone holds no such file.
    func storedAssetSize(_ checksum: String) -> Int64? { storage.storedAssetSize(checksum) }
}
