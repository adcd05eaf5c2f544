import CloudKit
import Testing

/// The subscription modern sync code saves, with `import CloudKit` alone: a
/// `CKDatabaseSubscription` on the private database, whose notifications say "something
/// changed" and send the app to fetch the database's changes.
@Suite struct DatabaseSubscriptionTests {
    @Test func aDatabaseSubscriptionNotifiesOfChangesInEveryZone() async throws {
        let path = NSTemporaryDirectory() + "ckfs-dbsub-" + UUID().uuidString
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
}
