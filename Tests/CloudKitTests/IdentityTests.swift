import CloudKit
import Testing
import TestSupport

/// IDs as CloudKit code compares them, with `import CloudKit` alone: what comes back from a
/// save, a fetch, a query or a zone listing has the ID the caller wrote, its zone owned by
/// `CKCurrentUserDefaultName`, so dictionaries keyed by IDs find their entries.
@Suite struct IdentityTests {
    @Test func resultsCarryTheIDsTheCallerWrote() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Work", ownerName: CKCurrentUserDefaultName)
        try await db.save(CKRecordZone(zoneID: zoneID))
        let ids = [CKRecord.ID(recordName: "a"), CKRecord.ID(recordName: "b", zoneID: zoneID)]
        var local: [CKRecord.ID: String] = [:]
        for id in ids {
            let record = CKRecord(recordType: "Note", recordID: id)
            record["text"] = id.recordName
            let saved = try await db.save(record)
            #expect(saved.recordID == id)
            local[saved.recordID] = id.recordName
        }
        for id in ids {
            let fetched = try await db.record(for: id)
            #expect(local[fetched.recordID] == id.recordName)
        }
        let (matches, _) = try await db.records(matching: CKQuery(recordType: "Note", predicate: NSPredicate(value: true)), inZoneWith: zoneID)
        #expect(matches.map(\.0) == [ids[1]])
        #expect(try matches[0].1.get().recordID == ids[1])
        let zones = try await db.allRecordZones().map(\.zoneID)
        #expect(Set(zones) == [zoneID, CKRecordZone.default().zoneID])
        let changed = try await db.databaseChanges(since: nil).modifications.map(\.zoneID)
        #expect(Set(changed) == Set(zones))
    }
}
