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

        let heard = try phone.notificationChanges(since: start).notifications
        #expect(heard.count == 2)
        #expect(heard.allSatisfy { $0 is CKDatabaseNotification && $0.notificationType == .database && $0.subscriptionID == "private-changes" })
        #expect((heard.first as? CKDatabaseNotification)?.databaseScope == .private)
        // What the app does on one: fetch the database's changes.
        let zones = try await phone.privateCloudDatabase.databaseChanges(since: nil).modifications.map(\.zoneID.zoneName)
        #expect(Set(zones) == ["Work", "_defaultZone"])

        // The public database takes no database subscription.
        var code: CKError.Code?
        do { _ = try await phone.publicCloudDatabase.save(CKDatabaseSubscription(subscriptionID: "public")) } catch let e as CKError { code = e.code }
        #expect(code == .invalidArguments)
    }
}
