import Foundation
import CloudStore

/// Zones, as CloudKit's database conveniences make, fetch and delete them: async, and with
/// completion handlers run on the container's queue.
extension CKDatabase {
    @discardableResult
    public func save(_ zone: CKRecordZone) async throws -> CKRecordZone {
        CKRecordZone(try engine().createZone(zone.zoneID.zoneName, encryptionScope: zone.encryptionScope.engine), as: zone.zoneID)
    }

    /// The zone named by `zoneID`; `zoneNotFound` when there is none.
    public func recordZone(for zoneID: CKRecordZone.ID) async throws -> CKRecordZone {
        CKRecordZone(try engine(zone: zoneID).zone(zoneID.zoneName, includingShare: true), as: zoneID)
    }

    /// Each zone of `ids`, or why it could not be fetched, by the IDs given.
    public func recordZones(for ids: [CKRecordZone.ID]) async throws -> [CKRecordZone.ID: Result<CKRecordZone, any Error>] {
        var out: [CKRecordZone.ID: Result<CKRecordZone, any Error>] = [:]
        for id in ids {
            do throws(CKError) { out[id] = .success(CKRecordZone(try engine(zone: id).zone(id.zoneName, includingShare: true), as: id)) } catch { out[id] = .failure(error) }
        }
        return out
    }

    @discardableResult
    public func deleteRecordZone(withID id: CKRecordZone.ID) async throws -> CKRecordZone.ID {
        try engine().deleteZone(id.zoneName)
        return id
    }

    public func allRecordZones() async throws -> [CKRecordZone] { try zones() }

    /// Saves and deletes zones, each on its own; results by the IDs given.
    public func modifyRecordZones(saving: [CKRecordZone], deleting: [CKRecordZone.ID]) async throws
        -> (saveResults: [CKRecordZone.ID: Result<CKRecordZone, any Error>], deleteResults: [CKRecordZone.ID: Result<Void, any Error>]) {
        let db = try engine()
        return Self.modifyZones(db, saving: saving, deleting: deleting)
    }

    public func save(_ zone: CKRecordZone, completionHandler: @escaping @Sendable (CKRecordZone?, (any Error)?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in CKRecordZone(try self.engine().createZone(zone.zoneID.zoneName, encryptionScope: zone.encryptionScope.engine), as: zone.zoneID) }
    }

    public func fetch(withRecordZoneID zoneID: CKRecordZone.ID, completionHandler: @escaping @Sendable (CKRecordZone?, (any Error)?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in CKRecordZone(try self.engine(zone: zoneID).zone(zoneID.zoneName, includingShare: true), as: zoneID) }
    }

    public func fetchAllRecordZones(completionHandler: @escaping @Sendable ([CKRecordZone]?, (any Error)?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in try self.zones() }
    }

    public func delete(withRecordZoneID zoneID: CKRecordZone.ID, completionHandler: @escaping @Sendable (CKRecordZone.ID?, (any Error)?) -> Void) {
        container.complete(completionHandler) { () throws(CKError) in
            try self.engine().deleteZone(zoneID.zoneName)
            return zoneID
        }
    }

    /// Each save and delete on its own, as CloudKit's zone calls are not atomic together.
    static func modifyZones(_ db: Database, saving: [CKRecordZone], deleting: [CKRecordZone.ID])
        -> (saveResults: [CKRecordZone.ID: Result<CKRecordZone, any Error>], deleteResults: [CKRecordZone.ID: Result<Void, any Error>]) {
        var saves: [CKRecordZone.ID: Result<CKRecordZone, any Error>] = [:]
        for zone in saving {
            do throws(CKError) { saves[zone.zoneID] = .success(CKRecordZone(try db.createZone(zone.zoneID.zoneName, encryptionScope: zone.encryptionScope.engine), as: zone.zoneID)) } catch {
                saves[zone.zoneID] = .failure(error)
            }
        }
        var deletes: [CKRecordZone.ID: Result<Void, any Error>] = [:]
        for id in deleting {
            do throws(CKError) {
                try db.deleteZone(id.zoneName)
                deletes[id] = .success(())
            } catch {
                deletes[id] = .failure(error)
            }
        }
        return (saves, deletes)
    }
}
