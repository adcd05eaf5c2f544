import CloudKit
import CloudStore
import Testing
import TestSupport

/// The push handler CloudKit apps write, with `import CloudKit` alone: the `userInfo` of a push
/// becomes a `CKNotification` of the kind its subscription is, and the app acts on it. The
/// pushes are the payloads ckfs hands out for real notifications (the web courier's and
/// `ckfs notifications --apns`'), read back from JSON bytes as a device reads them.
@Suite struct PushPayloadTests {
    /// What an app's `application(_:didReceiveRemoteNotification:)` does with a push.
    static func handle(_ userInfo: [AnyHashable: Any]) -> String {
        guard let notification = CKNotification(fromRemoteNotificationDictionary: userInfo) else { return "not CloudKit" }
        switch notification {
        case let query as CKQueryNotification:
            let title = query.recordFields?["title"] as? String ?? "-"
            let priority = query.recordFields?["priority"] as? Int ?? -1
            return "query \(query.subscriptionID ?? "") \(query.queryNotificationReason.rawValue) \(query.recordID?.recordName ?? "") "
                + "\(query.recordID?.zoneID.zoneName ?? "") \(title) \(priority) \(query.databaseScope == .private ? "private" : "public")"
        case let zone as CKRecordZoneNotification:
            return "zone \(zone.subscriptionID ?? "") \(zone.recordZoneID?.zoneName ?? "")"
        case let database as CKDatabaseNotification:
            return "database \(database.subscriptionID ?? "") \(database.databaseScope == .private ? "private" : "public")"
        default:
            return "other"
        }
    }

    @available(*, deprecated, message: "reads predicateFormat, as apps do; Linux Foundation deprecates it")
    @Test func aPushBecomesTheNotificationItsSubscriptionSends() async throws {
        let path = TemporaryStores.path("ckfs-push-")
        let phone = try CKContainer(store: Store.create(at: path), user: "mei", deviceID: "phone")
        let laptop = try CKContainer(store: Store.open(at: path), user: "mei", deviceID: "laptop")
        let db = phone.privateCloudDatabase
        let work = CKRecordZone.ID(zoneName: "Work")
        _ = try await db.save(CKRecordZone(zoneID: work))

        let tasks = CKQuerySubscription(recordType: "Task", predicate: NSPredicate(format: "priority > %d", 1), subscriptionID: "urgent",
                                        options: [.firesOnRecordCreation, .firesOnRecordUpdate])
        let info = CKSubscription.NotificationInfo()
        info.desiredKeys = ["title", "priority"]
        info.alertBody = "An urgent task"
        info.alertLocalizationKey = "URGENT_%@"
        info.alertLocalizationArgs = ["title"]
        info.titleLocalizationKey = "TASKS"
        info.subtitle = "Work"
        info.alertActionLocalizationKey = "OPEN"
        info.alertLaunchImage = "launch.png"
        info.shouldSendMutableContent = true
        info.collapseIDKey = "title"
        tasks.notificationInfo = info
        tasks.zoneID = work
        _ = try await db.save(tasks)
        _ = try await db.save(CKRecordZoneSubscription(zoneID: work, subscriptionID: "work-zone"))
        _ = try await db.save(CKDatabaseSubscription(subscriptionID: "private-changes"))
        let start = try phone.notificationChanges().token

        let task = CKRecord(recordType: "Task", recordID: CKRecord.ID(recordName: "t1", zoneID: work))
        task["title"] = "Ship the release"
        task["priority"] = 3
        _ = try await laptop.privateCloudDatabase.save(task)

        // The payloads as a device receives them: JSON bytes, read with JSONSerialization.
        let log = try Store.open(at: path).container().notificationLog(caller: Caller(userName: "mei"), environment: .development)
        let sent = try log.changes(since: start, excludingDevice: "phone").notifications
        let pushes = try sent.map { n -> [AnyHashable: Any] in
            let bytes = JSONWriter.compact(n.apnsPayload(container: phone.containerIdentifier ?? ""))
            return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        }
        #expect(Set(pushes.map(Self.handle)) == [
            "query urgent 1 t1 Work Ship the release 3 private",
            "zone work-zone Work",
            "database private-changes private",
        ])

        // The subclass asked for must match; a dictionary that is not CloudKit's gives nil.
        let query = try #require(pushes.first { Self.handle($0).hasPrefix("query") })
        let queryNotification = try #require(CKQueryNotification(fromRemoteNotificationDictionary: query))
        #expect(queryNotification.alertBody == "An urgent task")
        // The alert's other parts, under APNs' names in the push, and back on the notification.
        let alert = try #require((query["aps"] as? [String: Any])?["alert"] as? [String: Any])
        #expect(alert["loc-key"] as? String == "URGENT_%@" && alert["loc-args"] as? [String] == ["title"] && alert["subtitle"] as? String == "Work")
        #expect((query["aps"] as? [String: Any])?["mutable-content"] as? Int == 1)
        #expect(queryNotification.alertLocalizationKey == "URGENT_%@" && queryNotification.alertLocalizationArgs == ["title"])
        #expect(queryNotification.titleLocalizationKey == "TASKS" && queryNotification.subtitle == "Work")
        #expect(queryNotification.alertActionLocalizationKey == "OPEN" && queryNotification.alertLaunchImage == "launch.png")
        // And kept with the subscription, as another process reads it.
        let keptSubscription = try await laptop.privateCloudDatabase.subscription(for: "urgent")
        let predicate: NSPredicate? = keptSubscription.predicate
        #expect(predicate?.predicateFormat.contains("priority") == true && tasks.predicate.predicateFormat.contains("priority") == true)
        let kept = keptSubscription.notificationInfo
        #expect(kept?.alertLocalizationArgs == ["title"] && kept?.shouldSendMutableContent == true && kept?.collapseIDKey == "title")
        #expect(kept?.subtitle == "Work" && kept?.alertLaunchImage == "launch.png")
        #expect(queryNotification.recordID == task.recordID, "named as the app named the record")
        #expect(CKRecordZoneNotification(fromRemoteNotificationDictionary: query) == nil)
        #expect(CKNotification(fromRemoteNotificationDictionary: query)?.containerIdentifier == phone.containerIdentifier)
        #expect(Self.handle(["aps": ["alert": "Hello"]]) == "not CloudKit")
        #expect(Self.handle(["ck": ["nid": "x", "qry": ["rid": "t1"]]]) == "not CloudKit", "a query part without its subscription")
    }
}
