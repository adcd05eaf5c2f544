import CloudKit
import Testing
import TestSupport

/// Callback-style CloudKit code, with `import CloudKit` alone: the database's batch calls with
/// completion handlers (results keyed by the IDs passed, a cursor to page on), and the
/// subscription operations as setup code runs them on a database.
@Suite struct CompletionHandlerTests {
    @Test func batchCallsWithCompletionHandlers() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Callbacks")
        let zones = try await withCheckedThrowingContinuation { c in
            db.modifyRecordZones(saving: [CKRecordZone(zoneID: zoneID)], deleting: []) { c.resume(with: $0) }
        }
        #expect(try zones.saveResults[zoneID]?.get().zoneID == zoneID)
        let fetchedZones = try await withCheckedThrowingContinuation { c in db.fetch(withRecordZoneIDs: [zoneID]) { c.resume(with: $0) } }
        #expect(try fetchedZones[zoneID]?.get().capabilities.contains(.atomic) == true)

        let records = ["a", "b", "c"].enumerated().map { (i, name) -> CKRecord in
            let r = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: name, zoneID: zoneID))
            r["n"] = i
            return r
        }
        let saved = try await withCheckedThrowingContinuation { c in db.modifyRecords(saving: records, deleting: []) { c.resume(with: $0) } }
        #expect(Set(saved.saveResults.keys) == Set(records.map(\.recordID)))
        let missing = CKRecord.ID(recordName: "missing", zoneID: zoneID)
        let fetched = try await withCheckedThrowingContinuation { c in
            db.fetch(withRecordIDs: [records[1].recordID, missing], desiredKeys: ["n"]) { c.resume(with: $0) }
        }
        #expect(try fetched[records[1].recordID]?.get()["n"] as? Int == 1)
        guard case .failure(let error as CKError)? = fetched[missing] else { Issue.record("no failure for \(missing)"); return }
        #expect(error.code == .unknownItem)

        // The operation form reports each record's progress before its result.
        let operation = CKFetchRecordsOperation(recordIDs: [records[0].recordID, missing])
        let progress = Locked<[String]>([])
        operation.perRecordProgressBlock = { id, done in progress.withLock { $0.append("\(id.recordName) \(done)") } }
        operation.perRecordResultBlock = { id, _ in progress.withLock { $0.append("\(id.recordName) result") } }
        await withCheckedContinuation { done in
            operation.fetchRecordsResultBlock = { _ in done.resume() }
            db.add(operation)
        }
        #expect(progress.withLock { $0 } == ["a 1.0", "a result", "missing result"])

        // A page at a time, each record once.
        let query = CKQuery(recordType: "Item", predicate: NSPredicate(value: true))
        query.sortDescriptors = [NSSortDescriptor(key: "n", ascending: true)]
        var page = try await withCheckedThrowingContinuation { c in db.fetch(withQuery: query, inZoneWith: zoneID, resultsLimit: 2) { c.resume(with: $0) } }
        var names = page.matchResults.map(\.0.recordName)
        while let cursor = page.queryCursor {
            page = try await withCheckedThrowingContinuation { c in db.fetch(withCursor: cursor, resultsLimit: 2) { c.resume(with: $0) } }
            names += page.matchResults.map(\.0.recordName)
        }
        #expect(names == ["a", "b", "c"])

        // Changes: the zone in the database's, the records in the zone's.
        let databaseChanges = try await withCheckedThrowingContinuation { c in db.fetchDatabaseChanges(since: nil) { c.resume(with: $0) } }
        #expect(databaseChanges.modifications.map(\.zoneID).contains(zoneID))
        let zoneChanges = try await withCheckedThrowingContinuation { c in
            db.fetchRecordZoneChanges(inZoneWith: zoneID, since: nil, resultsLimit: 10) { c.resume(with: $0) }
        }
        #expect(Set(zoneChanges.modificationResultsByID.keys) == Set(records.map(\.recordID)) && !zoneChanges.moreComing)
        let deleted = try await withCheckedThrowingContinuation { c in db.modifyRecords(saving: [], deleting: [records[0].recordID]) { c.resume(with: $0) } }
        #expect((try? deleted.deleteResults[records[0].recordID]?.get()) != nil, "deleted")
        let later = try await withCheckedThrowingContinuation { c in
            db.fetchRecordZoneChanges(inZoneWith: zoneID, since: zoneChanges.changeToken) { c.resume(with: $0) }
        }
        #expect(later.deletions.map(\.recordID) == [records[0].recordID] && later.modificationResultsByID.isEmpty)

        // configuredWith runs its body against the database.
        let n = try await db.configuredWith(configuration: CKOperation.Configuration()) { try await $0.record(for: records[2].recordID)["n"] as? Int }
        #expect(n == 2)
    }

    @Test func subscriptionsSetUpWithOperationsAndHandlers() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Watched")
        _ = try await db.save(CKRecordZone(zoneID: zoneID))
        let subscription = CKRecordZoneSubscription(zoneID: zoneID, subscriptionID: "zone-changes")
        let info = CKSubscription.NotificationInfo()
        info.shouldSendContentAvailable = true
        subscription.notificationInfo = info

        // As sync code sets it up: an operation on the database, per-item and final blocks.
        let save = CKModifySubscriptionsOperation(subscriptionsToSave: [subscription, CKDatabaseSubscription(subscriptionID: "all")],
                                                  subscriptionIDsToDelete: nil)
        let savedIDs = Locked<[CKSubscription.ID]>([])
        save.perSubscriptionSaveBlock = { id, result in if case .success = result { savedIDs.withLock { $0.append(id) } } }
        let saveResult: Result<Void, Error> = await withCheckedContinuation { done in
            save.modifySubscriptionsResultBlock = { done.resume(returning: $0) }
            db.add(save)
        }
        #expect((try? saveResult.get()) != nil)
        #expect(Set(savedIDs.withLock { $0 }) == ["zone-changes", "all"])

        let fetch = CKFetchSubscriptionsOperation(subscriptionIDs: ["zone-changes", "nope"])
        let results = Locked<[CKSubscription.ID: Result<CKSubscription, Error>]>([:])
        fetch.perSubscriptionResultBlock = { id, result in results.withLock { $0[id] = result } }
        await withCheckedContinuation { done in
            fetch.fetchSubscriptionsResultBlock = { _ in done.resume() }
            db.add(fetch)
        }
        let found = try #require(try results.withLock { $0["zone-changes"] }?.get() as? CKRecordZoneSubscription)
        #expect(found.zoneID == zoneID && found.notificationInfo?.shouldSendContentAvailable == true)
        guard case .failure(let error as CKError)? = results.withLock({ $0["nope"] }) else { Issue.record("nope was found"); return }
        #expect(error.code == .unknownItem)

        // The completion-handler forms: fetch by IDs, delete one, and all that remain.
        let byID = try await withCheckedThrowingContinuation { c in db.fetch(withSubscriptionIDs: ["all", "nope"]) { c.resume(with: $0) } }
        #expect(try byID["all"]?.get().subscriptionID == "all")
        let modified = try await withCheckedThrowingContinuation { c in
            db.modifySubscriptions(saving: [], deleting: ["zone-changes"]) { c.resume(with: $0) }
        }
        #expect((try? modified.deleteResults["zone-changes"]?.get()) != nil, "deleted")
        let all = CKFetchSubscriptionsOperation.fetchAllSubscriptionsOperation()
        let remaining = Locked<[CKSubscription.ID]>([])
        all.perSubscriptionResultBlock = { id, _ in remaining.withLock { $0.append(id) } }
        await withCheckedContinuation { done in
            all.fetchSubscriptionsResultBlock = { _ in done.resume() }
            db.add(all)
        }
        #expect(remaining.withLock { $0 } == ["all"])
    }
}
