import Foundation
import Synchronization

/// The zones a store object has opened, one ``ZoneFolder`` per zone folder, with what they
/// share: the bytes of parsed records their caches keep together, the index files they keep
/// open together, the bytes of parsed log entries their catalogs keep; and the listings of
/// the databases' `zones` folders, so a save's quota check does not list its database again
/// while the folder is unchanged.
///
/// Its lock guards `zones`, `listings` and `zoneNameLists`, and is a leaf: nothing is called
/// while it is held but the making of a `ZoneFolder` (which takes no lock).
final class ZoneFolderTable: Sendable {
    let io: any StorageIO
    let tuning: ZoneTuning
    let reading: ZoneReading
    /// The bytes of parsed records the zones keep together.
    let cacheBudget: RecordCacheBudget
    /// The zones' index files kept open together.
    let openIndexFiles: OpenIndexFiles
    /// The bytes of parsed log entries the zones keep for their catalogs together.
    let feedBudget: RecordCacheBudget

    private struct Tables {
        var zones: [String: ZoneFolder] = [:]
        /// The entries of folders listed by ``listing(of:)``, with the folder's status then.
        var listings: [String: (status: Syscall.FileStatus, names: [String])] = [:]
        /// A zones folder's listing and the zone names it gives.
        var zoneNameLists: [String: (listing: [String], names: [String])] = [:]
    }
    private let tables = Mutex(Tables())

    init(io: any StorageIO, tuning: ZoneTuning, reading: ZoneReading) {
        self.io = io
        self.tuning = tuning
        self.reading = reading
        self.cacheBudget = RecordCacheBudget(limit: reading.cacheBytes)
        self.openIndexFiles = OpenIndexFiles(limit: tuning.openIndexFiles)
        self.feedBudget = RecordCacheBudget(limit: tuning.keptEntryBytes)
    }

    /// A zone's catalog holds its zone, which keeps the catalog: the zones let their catalogs
    /// go with the store object, as a deleted zone does when it is forgotten.
    deinit {
        for zone in tables.withLock({ $0.zones.values }) { zone.dropCatalog() }
    }

    /// The one `ZoneFolder` of a zone folder in this store object.
    func zone(directory: String, zoneID: ZoneID) -> ZoneFolder {
        tables.withLock { tables in
            if let z = tables.zones[directory] { return z }
            let z = ZoneFolder(directory: directory, zoneID: zoneID, io: io, tuning: tuning, reading: reading, budget: cacheBudget,
                               openIndexFiles: openIndexFiles, feedBudget: feedBudget)
            tables.zones[directory] = z
            return z
        }
    }

    /// Forgets a deleted zone: the next look at its folder opens it anew.
    func forget(directory: String) {
        let gone = tables.withLock { $0.zones.removeValue(forKey: directory) }
        gone?.dropCatalog()
    }

    /// Returns once every record file the zones' commits wrote behind is written.
    func waitForRecordFiles() {
        for z in tables.withLock({ Array($0.zones.values) }) { z.waitForFiles() }
    }

    /// The names in a folder, listed again only when its inode or times changed (adding or
    /// removing an entry changes them). Every save listed its database's zones for the quota
    /// check: five system calls where one stat now tells. Nil when there is no folder.
    ///
    /// File times are coarse (a clock tick), so two changes within one tick can leave the
    /// same times: a listing is kept only when the folder's last change was well before it
    /// was taken (as git does with its index). "Well before" is two seconds where the times
    /// are whole seconds (a file system without finer ones, or one that rounds to two), and
    /// 50 ms where they have a fraction (a tick is 10 ms at most): a save right after a store
    /// is made (as in `ckfs bench`) then lists the folder only for its first 50 ms.
    func listing(of directory: String) throws(CKError) -> [String]? {
        guard let st = try Syscall.stat(directory, times: true).orThrow(.internalError, "cannot stat \(directory)") else {
            tables.withLock { _ = $0.listings.removeValue(forKey: directory) }
            return nil
        }
        if let hit = tables.withLock({ $0.listings[directory] }), hit.status == st { return hit.names }
        let listedAt = Int64(Date().timeIntervalSince1970 * 1e9)
        guard let names = try Syscall.listDirectory(directory).orThrow(.internalError, "cannot list \(directory)") else { return nil }
        let changed = max(st.modifiedNanos, st.changedNanos)
        let margin: Int64 = changed % 1_000_000_000 == 0 ? 2_000_000_000 : 50_000_000
        let settled = listedAt - changed > margin
        tables.withLock { $0.listings[directory] = settled ? (st, names) : nil }
        return names
    }

    /// The zones in a database's `zones` folder, by name, sorted.
    func zoneNames(in directory: String) throws(CKError) -> [String] {
        let listing = try listing(of: directory) ?? []
        // The same listing is the same array (its storage is shared): compared in O(1).
        if let hit = tables.withLock({ $0.zoneNameLists[directory] }), hit.listing == listing { return hit.names }
        let names = listing.filter { !$0.hasPrefix(".") }.compactMap(StoreLayout.decode).sorted()
        tables.withLock { $0.zoneNameLists[directory] = (listing, names) }
        return names
    }
}
