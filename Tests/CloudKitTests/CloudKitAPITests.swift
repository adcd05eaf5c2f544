import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudKit

/// The CloudKit-shaped API: code written for CloudKit reads the same.
@Suite struct CloudKitAPITests {
    func container(_ t: TempStore, user: String = "alice") throws -> CKContainer {
        try CKContainer(store: t.store, user: user, deviceID: "api")
    }

    @Test func recordSubscriptChangedKeysAndTokens() throws {
        let r = CKRecord(recordType: "Artist", recordID: CKRecord.ID(recordName: "mei"))
        r["name"] = "Mei Chen"
        r["age"] = 41
        r["born"] = Date(timeIntervalSince1970: 1_714_000_000)
        r["tags"] = ["ink", "paper"]
        r["friend"] = CKRecord.Reference(recordID: CKRecord.ID(recordName: "kai"), action: .deleteSelf)
        #expect(r["name"] as? String == "Mei Chen")
        #expect(r["age"] as? Int == 41)
        #expect(r["born"] as? Date == Date(timeIntervalSince1970: 1_714_000_000))
        #expect(r["tags"] as? [String] == ["ink", "paper"])
        #expect((r["friend"] as? CKRecord.Reference)?.action == .deleteSelf)
        #expect(r.changedKeys() == ["age", "born", "friend", "name", "tags"])
        #expect(r.allTokens() == ["chen", "ink", "mei", "paper"])
        r["age"] = nil
        #expect(r.allKeys() == ["born", "friend", "name", "tags"])
    }

    @Test func asyncSaveFetchModifyAndConflictRecords() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let r = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n"))
        r["text"] = "hello world"
        let saved = try await db.save(r)
        #expect(saved.recordChangeTag != nil)
        #expect(saved.changedKeys().isEmpty)
        #expect(saved.creatorUserRecordID == (try await container(t).userRecordID()))
        let fetched = try await db.record(for: CKRecord.ID(recordName: "n"))
        #expect(fetched["text"] as? String == "hello world")
        fetched["text"] = "changed"
        _ = try await db.save(fetched)
        saved["text"] = "stale"
        do {
            _ = try await db.save(saved)
            Issue.record("stale save accepted")
        } catch let e as CKError where e.code == .serverRecordChanged {
            #expect(e.serverRecord?["text"] as? String == "changed")
            #expect(e.clientRecord?["text"] as? String == "stale")
            #expect(e.ancestorRecord?["text"] as? String == "hello world")
        }
        let (saves, deletes) = try await db.modifyRecords(saving: [CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "m"))],
                                                          deleting: [CKRecord.ID(recordName: "n")])
        // Keyed by the ID as the caller wrote it (its zone's owner is `__defaultOwner__`).
        #expect(try saves[CKRecord.ID(recordName: "m")]?.get() != nil)
        #expect(deletes.count == 1)
        do { _ = try await db.record(for: CKRecord.ID(recordName: "n")) } catch CKError.unknownItem {} catch { Issue.record("\(error)") }
    }

    @Test func systemFieldsEncodeAndRebuildARecordThatSavesAsTheSameVersion() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let r = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "sys"))
        r["text"] = "v1"
        let saved = try await db.save(r)
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        saved.encodeSystemFields(with: archiver)
        archiver.finishEncoding()
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
        unarchiver.requiresSecureCoding = false
        let rebuilt = try #require(CKRecord(coder: unarchiver))
        #expect(rebuilt.allKeys().isEmpty, "only system metadata was kept")
        #expect(rebuilt.recordChangeTag == saved.recordChangeTag)
        #expect(rebuilt.recordType == "Note")
        rebuilt["text"] = "v2"
        let again = try await db.save(rebuilt)
        #expect(again["text"] as? String == "v2")
    }

    @Test func modifyOperationCallsEveryBlockOnce() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let good = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "good"))
        let bad = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "_bad"))
        let op = CKModifyRecordsOperation(recordsToSave: [good, bad], recordIDsToDelete: nil)
        op.isAtomic = false
        let progress = LockedBox<[String]>([])
        let perRecord = LockedBox<[String]>([])
        op.perRecordProgressBlock = { r, p in progress.mutate { $0.append("\(r.recordID.recordName):\(p)") } }
        op.perRecordCompletionBlock = { r, e in perRecord.mutate { $0.append("\(r.recordID.recordName):\(e == nil ? "ok" : "\((e as! CKError).code)")") } }
        let outcome: ([CKRecord]?, Error?) = await withCheckedContinuation { c in
            op.modifyRecordsCompletionBlock = { saved, _, error in c.resume(returning: (saved, error)) }
            db.add(op)
        }
        #expect(outcome.0?.map(\.recordID.recordName) == ["good"])
        let error = try #require(outcome.1 as? CKError)
        #expect(error.code == .partialFailure)
        #expect(error.partialErrorsByItemID?.count == 1)
        #expect(progress.value.sorted() == ["_bad:0.0", "good:0.0", "good:1.0"])
        #expect(perRecord.value.sorted() == ["_bad:invalidArguments", "good:ok"])
    }

    @Test func operationsRunConcurrentlyAndEachCompletesOnce() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let count = 40
        let calls = LockedBox<[String: Int]>([:])
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let remaining = LockedBox(count)
            for i in 0..<count {
                let r = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "c\(i)"))
                let op = CKModifyRecordsOperation(recordsToSave: [r])
                op.modifyRecordsCompletionBlock = { _, _, error in
                    calls.mutate { $0["c\(i)", default: 0] += error == nil ? 1 : 100 }
                    remaining.mutate { $0 -= 1 }
                    if remaining.value == 0 { c.resume() }
                }
                db.add(op)
            }
        }
        #expect(calls.value.count == count)
        #expect(calls.value.values.allSatisfy { $0 == 1 })
        let fetch = CKFetchRecordsOperation(recordIDs: (0..<count).map { CKRecord.ID(recordName: "c\($0)") } + [CKRecord.ID(recordName: "none")])
        fetch.desiredKeys = []
        let (found, error): ([CKRecord.ID: CKRecord]?, Error?) = await withCheckedContinuation { c in
            fetch.fetchRecordsCompletionBlock = { found, error in c.resume(returning: (found, error)) }
            db.add(fetch)
        }
        #expect(found?.count == count)
        #expect(((error as? CKError)?.partialErrorsByItemID?.values.first as? CKError)?.code == .unknownItem)
    }

    @Test func assetsRoundTripThroughFileURLs() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let url = URL(fileURLWithPath: t.path + "/photo.jpg")
        try Data("jpeg bytes".utf8).write(to: url)
        let r = CKRecord(recordType: "Photo", recordID: CKRecord.ID(recordName: "p"))
        r["image"] = CKAsset(fileURL: url)
        _ = try await db.save(r)
        let back = try await db.record(for: CKRecord.ID(recordName: "p"))
        let asset = try #require(back["image"] as? CKAsset)
        #expect(try Data(contentsOf: #require(asset.fileURL)) == Data("jpeg bytes".utf8))
        // An NSObject, as Apple's: equal and hashed by the file it holds.
        let again = try #require(try await db.record(for: CKRecord.ID(recordName: "p"))["image"] as? CKAsset)
        let object: NSObject = asset
        #expect(object.isEqual(again) && asset == again && asset.hash == again.hash)
        #expect(Set([asset, again]).count == 1)
        #expect(!asset.isEqual(CKAsset(fileURL: url)), "a stored file is not the local file it came from")
        #expect(CKAsset(fileURL: url) == CKAsset(fileURL: url))
    }

    @Test func zonesAndChangesThroughTheAPI() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        let zone = try await db.save(CKRecordZone(zoneName: "Work"))
        #expect(zone.capabilities.contains(.atomic) && zone.capabilities.contains(.fetchChanges))
        let r = CKRecord(recordType: "Note", zoneID: zone.zoneID)
        _ = try await db.save(r)
        let changes = try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: nil)
        #expect(changes.modificationResultsByID.keys.map(\.recordName) == [r.recordID.recordName])
        try await db.deleteRecordZone(withID: zone.zoneID)
        #expect(try await db.allRecordZones().map(\.zoneID.zoneName) == ["_defaultZone"])
        #expect(CKCurrentUserDefaultName == "__defaultOwner__")
    }
}
