/// The file backend's ``DatabaseStorage``: a database's folder, whose `zones/` holds one
/// folder per zone (``ZoneFolder``).
struct ZoneFolders: DatabaseStorage {
    /// The database's folder.
    let directory: String
    let ownerName: String
    let table: ZoneFolderTable

    func zoneNames() throws(CKError) -> [String] {
        try table.zoneNames(in: StoreLayout.zonesDirectory(directory))
    }

    func zone(_ name: String) -> any ZoneStorage { folder(name) }

    func folder(_ name: String) -> ZoneFolder {
        table.zone(directory: StoreLayout.zoneDirectory(directory, zone: name), zoneID: ZoneID(zoneName: name, ownerName: ownerName))
    }

    /// Made under a temporary name, synced, renamed (``ZoneFolder/create(at:meta:io:)``).
    func createZone(_ meta: ZoneMeta) throws(CKError) -> Bool {
        try FileWriter(io: table.io).makeDirectories(StoreLayout.zonesDirectory(directory))
        return try ZoneFolder.create(at: StoreLayout.zoneDirectory(directory, zone: meta.zoneName), meta: meta, io: table.io)
    }

    func deleteZone(_ name: String) throws(CKError) {
        let zone = folder(name)
        guard zone.exists else { throw CKError(.zoneNotFound, "zone \(name) does not exist") }
        try zone.delete()
        table.forget(directory: zone.directory)
    }

    /// Each zone's usage, from its commit marker (read without the zone's lock).
    func usage(excluding zone: String?) throws(CKError) -> Int64 {
        var total: Int64 = 0
        for z in try zoneNames() where z != zone { total += try folder(z).peekMarker()?.usage ?? 0 }
        return total
    }
}
