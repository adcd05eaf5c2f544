import CloudKit
import Testing
import TestSupport

/// Zones as sync code sets them up, with `import CloudKit` alone: create the zone if it is not
/// there, fetch it, list them, delete one, with operations and with the database's calls.
@Suite struct ZoneOperationTests {
    @Test func syncCodeCreatesItsZoneOnceAndFindsItAgain() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Notes", ownerName: CKCurrentUserDefaultName)

        // The usual set-up: fetch the zone; on zoneNotFound, create it with an operation.
        var exists = true
        do { _ = try await db.recordZone(for: zoneID) } catch let error as CKError where error.code == .zoneNotFound { exists = false }
        #expect(!exists)
        let create = CKModifyRecordZonesOperation(recordZonesToSave: [CKRecordZone(zoneID: zoneID)], recordZoneIDsToDelete: nil)
        let perZone = LockedList<String>()
        create.perRecordZoneSaveBlock = { id, result in perZone.append("\(id.zoneName) \((try? result.get()) != nil)") }
        let (saved, failure): ([CKRecordZone]?, (any Error)?) = await withCheckedContinuation { c in
            create.modifyRecordZonesCompletionBlock = { saved, _, error in c.resume(returning: (saved, error)) }
            db.add(create)
        }
        #expect(failure == nil && perZone.items == ["Notes true"])
        let zone = try #require(saved?.first)
        #expect(zone.zoneID == zoneID)                                   // the ID as written
        #expect(zone.capabilities.contains(.fetchChanges) && zone.capabilities.contains(.atomic))

        // Fetched by ID, one missing: a per-zone error keyed by its ID, and a partial failure.
        let missingID = CKRecordZone.ID(zoneName: "Nowhere")
        let fetch = CKFetchRecordZonesOperation(recordZoneIDs: [zoneID, missingID])
        let (found, error): ([CKRecordZone.ID: CKRecordZone]?, (any Error)?) = await withCheckedContinuation { c in
            fetch.fetchRecordZonesCompletionBlock = { found, error in c.resume(returning: (found, error)) }
            db.add(fetch)
        }
        #expect(found?[zoneID]?.zoneID.zoneName == "Notes")
        let partial = try #require(error as? CKError)
        #expect(partial.code == .partialFailure)
        #expect((partial.partialErrorsByItemID?[missingID] as? CKError)?.code == .zoneNotFound)

        // Every zone, with an operation and with the database's calls.
        let all = CKFetchRecordZonesOperation.fetchAllRecordZonesOperation()
        let names: [String] = await withCheckedContinuation { c in
            all.fetchRecordZonesCompletionBlock = { found, _ in c.resume(returning: (found ?? [:]).keys.map(\.zoneName).sorted()) }
            db.add(all)
        }
        #expect(names == ["Notes", "_defaultZone"])
        let results = try await db.recordZones(for: [zoneID, missingID])
        #expect((try? results[zoneID]?.get())?.zoneID == zoneID)
        #expect(results[missingID].map { if case .failure = $0 { true } else { false } } == true)

        // Deleted with the async call (it answers the ID) and gone after.
        let (saves, deletes) = try await db.modifyRecordZones(saving: [CKRecordZone(zoneName: "Scratch")], deleting: [])
        #expect(saves.count == 1 && deletes.isEmpty)
        #expect(try await db.deleteRecordZone(withID: CKRecordZone.ID(zoneName: "Scratch")).zoneName == "Scratch")
        let left: [String] = try await db.allRecordZones().map(\.zoneID.zoneName).sorted()
        #expect(left == ["Notes", "_defaultZone"])
        let handler: String? = await withCheckedContinuation { c in
            db.fetch(withRecordZoneID: zoneID) { zone, _ in c.resume(returning: zone?.zoneID.zoneName) }
        }
        #expect(handler == "Notes")
    }
}
