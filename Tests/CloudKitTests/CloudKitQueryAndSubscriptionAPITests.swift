import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudKit

/// CKQuery / CKQueryOperation and CKSubscription / CKNotification read as
/// CloudKit code does.
@Suite struct CloudKitQueryAndSubscriptionAPITests {
    func container(_ t: TempStore, user: String = "alice", device: String = "api") throws -> CKContainer {
        try CKContainer(store: t.store, user: user, deviceID: device)
    }

    func fill(_ db: CKDatabase, count: Int) async throws {
        let records = (0..<count).map { i -> CKRecord in
            let r = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: String(format: "i%03d", i)))
            r["n"] = i
            r["title"] = i % 2 == 0 ? "even \(i)" : "odd \(i)"
            return r
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
    }

    /// Pages of `resultsLimit` through cursors, every block once per record, sorted, with
    /// only the desired keys.
    @Test func queryOperationPagesWithCursors() async throws {
        let t = try TempStore()
        let db = try container(t).privateCloudDatabase
        try await fill(db, count: 25)
        let query = CKQuery(recordType: "Item", predicate: try QueryPredicate(format: "n >= %@ AND title BEGINSWITH %@", .int(3), .string("odd")))
        query.sortDescriptors = [CloudKitSortDescriptor(key: "n", ascending: false)]
        var names: [String] = []
        var cursor: CKQueryOperation.Cursor?
        var pages = 0
        repeat {
            let op = cursor.map(CKQueryOperation.init(cursor:)) ?? CKQueryOperation(query: query)
            op.resultsLimit = 4
            op.desiredKeys = ["n"]
            let matched = LockedBox<[CKRecord]>([])
            let fetched = LockedBox<Int>(0)
            op.recordMatchedBlock = { _, r in if case .success(let rec) = r { matched.mutate { $0.append(rec) } } }
            op.recordFetchedBlock = { _ in fetched.mutate { $0 += 1 } }
            let next: CKQueryOperation.Cursor? = try await withCheckedThrowingContinuation { c in
                op.queryResultBlock = { c.resume(with: $0) }
                db.add(op)
            }
            #expect(matched.value.count <= 4 && fetched.value == matched.value.count)
            #expect(matched.value.allSatisfy { $0.allKeys() == ["n"] })
            names += matched.value.map(\.recordID.recordName)
            cursor = next
            pages += 1
        } while cursor != nil
        let expected = (3..<25).filter { $0 % 2 == 1 }.reversed().map { String(format: "i%03d", $0) }
        #expect(names == expected)
        #expect(pages == 3)
        // The async form gives the same first page; a bad predicate names the construct.
        let first = try await db.records(matching: query, resultsLimit: 4)
        #expect(first.matchResults.map(\.0.recordName) == Array(expected.prefix(4)))
        let rest = try await db.records(continuingMatchFrom: try #require(first.queryCursor), resultsLimit: 100)
        #expect(rest.matchResults.map(\.0.recordName) == Array(expected.dropFirst(4)))
        #expect(rest.queryCursor == nil)
        #expect(throws: CKError.self) { try QueryPredicate(format: "title LIKE 'a*'") }
    }

    /// The seed's initializers, save / fetch / list / delete, and notifications that reach
    /// another client of the user but not the one that made the change.
    @Test func subscriptionsAndNotificationsThroughTheAPI() async throws {
        let t = try TempStore()
        let phone = try container(t, device: "phone")
        let laptop = try container(t, device: "laptop")
        let db = phone.privateCloudDatabase
        _ = try await db.save(CKRecordZone(zoneName: "Work"))
        let seedQuery = CKSubscription(recordType: "Item", predicate: try QueryPredicate(format: "n > 1"), options: [.firesOnRecordCreation, .firesOnRecordUpdate])
        #expect(UUID(uuidString: seedQuery.subscriptionID) != nil)
        #expect(seedQuery.subscriptionType == .query)
        let info = CKSubscription.NotificationInfo()
        info.alertBody = "Item changed"
        info.desiredKeys = ["title"]
        info.shouldBadge = true
        seedQuery.notificationInfo = info
        let zone = CKRecordZoneSubscription(zoneID: CKRecordZone.ID(zoneName: "Work"), subscriptionID: "work")
        let badZone = CKSubscription(zoneID: CKRecordZone.ID(zoneName: "Work"), options: .firesOnRecordCreation)
        let saved = try await db.modifySubscriptions(saving: [seedQuery, zone, badZone], deleting: [])
        #expect((try saved.saveResults[seedQuery.subscriptionID]?.get())?.notificationInfo?.alertBody == "Item changed")
        #expect((try saved.saveResults["work"]?.get()) is CKRecordZoneSubscription)
        #expect((saved.saveResults[badZone.subscriptionID].flatMap { if case .failure(let e) = $0 { e } else { nil } } as? CKError)?.code == .invalidArguments)
        let all = try await laptop.privateCloudDatabase.allSubscriptions()
        #expect(Set(all.map(\.subscriptionID)) == [seedQuery.subscriptionID, "work"])
        #expect((try await db.subscription(for: "work") as? CKRecordZoneSubscription)?.zoneID.zoneName == "Work")

        try await fill(db, count: 3)
        let r = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "w", zoneID: CKRecordZone.ID(zoneName: "Work")))
        r["n"] = 5
        _ = try await db.save(r)
        // The phone made every change: it hears of none; the laptop hears of all.
        #expect(try phone.notificationChanges().notifications.isEmpty)
        let heard = try laptop.notificationChanges()
        #expect(heard.notifications.count == 3)
        let query = heard.notifications.compactMap { $0 as? CKQueryNotification }
        #expect(query.map { $0.recordID?.recordName } == ["i002", "w"])
        #expect(query.allSatisfy { $0.queryNotificationReason == .recordCreated && $0.alertBody == "Item changed" })
        #expect(query.first?.recordFields?["title"] as? String == "even 2")
        #expect(heard.notifications.compactMap { ($0 as? CKRecordZoneNotification)?.recordZoneID?.zoneName } == ["Work"])
        #expect(heard.badge == 2)
        let laptopUser = try await laptop.userRecordID()
        #expect(heard.notifications.allSatisfy { $0.subscriptionOwnerUserRecordID == laptopUser })

        // The operations: fetch since a token, mark read.
        let fetch = CKFetchNotificationChangesOperation(previousServerChangeToken: nil)
        fetch.resultsLimit = 2
        let got = LockedBox<[CKNotification]>([])
        fetch.notificationChangedBlock = { n in got.mutate { $0.append(n) } }
        let token: CKServerChangeToken? = try await withCheckedThrowingContinuation { c in
            fetch.fetchNotificationChangesCompletionBlock = { token, error in if let error { c.resume(throwing: error) } else { c.resume(returning: token) } }
            laptop.add(fetch)
        }
        #expect(got.value.count == 2 && fetch.moreComing)
        // The token is a CKServerChangeToken, as Apple's: archived, read back, and the next
        // fetch goes on from it. A zone's token is refused there.
        let archivedToken = try NSKeyedArchiver.archivedData(withRootObject: try #require(token), requiringSecureCoding: true)
        let following = CKFetchNotificationChangesOperation(previousServerChangeToken: try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: archivedToken))
        let rest = LockedBox<[CKNotification]>([])
        following.notificationChangedBlock = { n in rest.mutate { $0.append(n) } }
        _ = try await withCheckedThrowingContinuation { (c: CheckedContinuation<CKServerChangeToken?, Error>) in
            following.fetchNotificationChangesCompletionBlock = { token, error in if let error { c.resume(throwing: error) } else { c.resume(returning: token) } }
            laptop.add(following)
        }
        #expect(rest.value.count == 1 && !following.moreComing)
        let zoneToken = try await laptop.privateCloudDatabase.recordZoneChanges(inZoneWith: CKRecordZone.ID(zoneName: "Work"), since: nil).changeToken
        let wrong = CKFetchNotificationChangesOperation(previousServerChangeToken: zoneToken)
        let refused: Error? = await withCheckedContinuation { c in
            wrong.fetchNotificationChangesCompletionBlock = { _, error in c.resume(returning: error) }
            laptop.add(wrong)
        }
        #expect((refused as? CKError)?.code == .invalidArguments)
        let mark = CKMarkNotificationsReadOperation(notificationIDsToMarkRead: got.value.compactMap(\.notificationID))
        let marked: [CKNotification.ID]? = await withCheckedContinuation { c in
            mark.markNotificationsReadCompletionBlock = { ids, _ in c.resume(returning: ids) }
            laptop.add(mark)
        }
        #expect(marked?.count == 2)
        #expect(try laptop.notificationChanges().notifications.map(\.isRead) == [true, true, false])
        // The IDs handled are objects, as Apple's: kept in an archive across a relaunch, read
        // back equal, and found in a set of those fetched again.
        let handled = try #require(got.value.first?.notificationID)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: handled, requiringSecureCoding: true)
        let kept = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKNotification.ID.self, from: archive))
        #expect(kept == handled && kept !== handled)
        #expect(Set(try laptop.notificationChanges().notifications.compactMap(\.notificationID)).contains(kept))

        // A stream delivers new notifications as they come.
        let stream = laptop.notifications(since: try laptop.notificationChanges().token)
        let r2 = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "late"))
        r2["n"] = 9
        _ = try await db.save(r2)
        var iterator = stream.makeAsyncIterator()
        let next = try await iterator.next()
        #expect((next as? CKQueryNotification)?.recordID?.recordName == "late")

        #expect(try await db.deleteSubscription(withID: "work") == "work")
        await #expect(throws: CKError.self) { try await db.subscription(for: "work") }
    }
}
