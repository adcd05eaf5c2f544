import CloudKit
import CloudStore
import Testing
import TestSupport

/// The subscription modern sync code saves, with `import CloudKit` alone: a
/// `CKDatabaseSubscription` on the private database, whose notifications say "something
/// changed" and send the app to fetch the database's changes.
@Suite struct DatabaseSubscriptionTests {
    @Test func aDatabaseSubscriptionNotifiesOfChangesInEveryZone() async throws {
        let path = TemporaryStores.path("ckfs-dbsub-")
        let phone = try CKContainer(store: Store.create(at: path), user: "mei", deviceID: "phone")
        let laptop = try CKContainer(store: Store.open(at: path), user: "mei", deviceID: "laptop")

        let subscription = CKDatabaseSubscription(subscriptionID: "private-changes")
        let info = CKSubscription.NotificationInfo()
        info.shouldSendContentAvailable = true
        subscription.notificationInfo = info
        let saved = try await phone.privateCloudDatabase.save(subscription)
        #expect(saved.subscriptionType == .database && saved is CKDatabaseSubscription)

        let start = try phone.notificationChanges().token
        try await laptop.privateCloudDatabase.save(CKRecordZone(zoneName: "Work"))
        _ = try await laptop.privateCloudDatabase.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "w", zoneID: CKRecordZone.ID(zoneName: "Work"))))
        _ = try await laptop.privateCloudDatabase.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "d")))

        // The zone's creation and a commit in each zone.
        let heard = try phone.notificationChanges(since: start).notifications
        #expect(heard.count == 3)
        #expect(heard.allSatisfy { $0 is CKDatabaseNotification && $0.notificationType == .database && $0.subscriptionID == "private-changes" })
        #expect((heard.first as? CKDatabaseNotification)?.databaseScope == .private)
        // What the app does on one: fetch the database's changes.
        let changes = try await phone.privateCloudDatabase.databaseChanges(since: nil)
        #expect(Set(changes.modifications.map(\.zoneID.zoneName)) == ["Work", "_defaultZone"])

        // A zone deleted elsewhere is heard too, and the next fetch reports the deletion; the
        // device that makes a change does not hear it.
        let beforeDelete = try phone.notificationChanges().token
        _ = try await laptop.privateCloudDatabase.deleteRecordZone(withID: CKRecordZone.ID(zoneName: "Work"))
        #expect(try phone.notificationChanges(since: beforeDelete).notifications.count == 1)
        #expect(try laptop.notificationChanges(since: beforeDelete).notifications.isEmpty)
        let after = try await phone.privateCloudDatabase.databaseChanges(since: changes.changeToken)
        #expect(after.deletions.map(\.zoneID.zoneName) == ["Work"])

        // The public database takes no database subscription.
        var code: CKError.Code?
        do { _ = try await phone.publicCloudDatabase.save(CKDatabaseSubscription(subscriptionID: "public")) } catch let e as CKError { code = e.code }
        #expect(code == .invalidArguments)
    }

    /// `recordType` on a database or zone subscription: sync code that mirrors one type hears
    /// only of changes to records of it (and, on the database, of zones created or deleted).
    @Test func aSubscriptionWithARecordTypeHearsOnlyThatType() async throws {
        let path = TemporaryStores.path("ckfs-dbsub-")
        let phone = try CKContainer(store: Store.create(at: path), user: "mei", deviceID: "phone")
        let laptop = try CKContainer(store: Store.open(at: path), user: "mei", deviceID: "laptop")
        let work = CKRecordZone.ID(zoneName: "Work")
        try await laptop.privateCloudDatabase.save(CKRecordZone(zoneID: work))

        let notes = CKDatabaseSubscription(subscriptionID: "notes")
        notes.recordType = "Note"
        let tasks = CKRecordZoneSubscription(zoneID: work, subscriptionID: "tasks")
        tasks.recordType = "Task"
        for s in [notes, tasks] as [CKSubscription] { _ = try await phone.privateCloudDatabase.save(s) }
        // Read back by another device, from the store.
        let fetched = try await laptop.privateCloudDatabase.allSubscriptions()
        #expect(Dictionary(uniqueKeysWithValues: fetched.map { ($0.subscriptionID, $0.recordType) }) == ["notes": "Note", "tasks": "Task"])
        #expect((fetched.first { $0.subscriptionID == "notes" } as? CKDatabaseSubscription)?.recordType == "Note")

        let start = try phone.notificationChanges().token
        let db = laptop.privateCloudDatabase
        _ = try await db.save(CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: "t1", zoneID: work)))
        _ = try await db.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n1", zoneID: work)))
        _ = try await db.save(CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: "t2")))
        _ = try await db.deleteRecord(withID: CKRecord.ID(recordName: "n1", zoneID: work))
        _ = try await db.save(CKRecordZone(zoneName: "Later"))
        let heard = try phone.notificationChanges(since: start).notifications
        // t1: tasks; n1 saved: notes; t2 in the default zone: nobody; n1 deleted: notes; the
        // new zone: notes, as a database subscription hears of every zone change.
        #expect(heard.map(\.subscriptionID) == ["tasks", "notes", "notes", "notes"])
        #expect(heard.map(\.notificationType) == [.recordZone, .database, .database, .database])

        // A type name CloudKit would refuse is refused at the save.
        let bad = CKDatabaseSubscription(subscriptionID: "bad")
        bad.recordType = "no spaces"
        var code: CKError.Code?
        do { _ = try await phone.privateCloudDatabase.save(bad) } catch let e as CKError { code = e.code }
        #expect(code == .invalidArguments)
    }
}
