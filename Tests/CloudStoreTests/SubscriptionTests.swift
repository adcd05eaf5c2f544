import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Subscriptions and notifications: the firing matrix, who gets what, firesOnce,
/// zone subscriptions, payload limits, tokens, read marks and the checks on saving.
@Suite struct SubscriptionTests {
    static func notifications(_ t: TempStore, user: String = "alice", device: String? = "other-device",
                              since token: NotificationToken? = nil) throws -> NotificationChanges {
        try t.store.container().notificationLog(user: user).changes(since: token, excludingDevice: device)
    }

    enum Event: CaseIterable { case create, update, delete }

    /// Create / update / delete × each trigger × matching before and after. An update
    /// fires when the record matches after the change, a deletion when it matched before;
    /// the originating client gets nothing.
    @Test func firingMatrix() throws {
        let t = try TempStore()
        let db = try t.db()
        let triggers: [SubscriptionOptions] = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
        var expected: [String: CloudNotification.Reason] = [:]
        var cases = 0
        for event in Event.allCases {
            for (ti, trigger) in triggers.enumerated() {
                for before in [false, true] where event != .create || !before {
                    for after in [false, true] where event != .delete || !after {
                        cases += 1
                        let type = "T\(cases)"
                        let name = "r\(cases)"
                        if event != .create {
                            try db.save(record(name, type: type, ["n": .int64(before ? 1 : -1)]))
                        }
                        try db.saveSubscription(Subscription(recordType: type, predicate: try PredicateParser.parse("n > 0"),
                                                             subscriptionID: "s\(cases)", options: trigger))
                        switch event {
                        case .create:
                            try db.save(record(name, type: type, ["n": .int64(after ? 1 : -1)]))
                            if ti == 0 && after { expected[name] = .recordCreated }
                        case .update:
                            var r = try db.record(for: id(name))
                            r["n"] = .int64(after ? 1 : -1)
                            try db.save(r)
                            if ti == 1 && after { expected[name] = .recordUpdated }
                        case .delete:
                            try db.delete(id(name))
                            if ti == 2 && before { expected[name] = .recordDeleted }
                        }
                    }
                }
            }
        }
        #expect(cases == 6 + 12 + 6)
        let got = try Self.notifications(t).notifications
        var byRecord: [String: CloudNotification.Reason] = [:]
        for n in got {
            #expect(byRecord[n.recordID!.recordName] == nil, "one notification per record")
            byRecord[n.recordID!.recordName] = n.reason
            #expect(n.subscriptionID == "s" + n.recordID!.recordName.dropFirst())
            #expect(n.zoneID.zoneName == ZoneID.defaultZoneName)
            #expect(n.originDeviceID == "test-device")
            #expect(n.kind == .query && n.databaseScope == .private)
        }
        #expect(byRecord == expected)
        #expect(expected.count == 4)
        // The client that made the changes gets none of them.
        #expect(try Self.notifications(t, device: "test-device").notifications.isEmpty)
    }

    @Test func firesOnceFiresOnceAndIsDeleted() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.saveSubscription(Subscription(recordType: "Note", subscriptionID: "once", options: [.firesOnRecordCreation, .firesOnce]))
        // Two matching records in one commit, then one more commit.
        try #require(db.modify(saving: [record("a"), record("b")]).error == nil)
        try db.save(record("c"))
        #expect(try Self.notifications(t).notifications.count == 1)
        #expect(try db.subscriptions().isEmpty)
        #expect(throws: CKError.self) { try db.subscription("once") }
    }

    /// Two store objects (as two processes) commit in two zones at once: a firesOnce
    /// subscription watching every zone sends exactly one notification.
    @Test func firesOnceUnderConcurrentCommits() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("A")
        try db.createZone("B")
        for round in 0..<10 {
            try db.saveSubscription(Subscription(recordType: "Note", subscriptionID: "once\(round)", options: [.firesOnRecordCreation, .firesOnce]))
            let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "d2"))
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                _ = try? (i == 0 ? db : other).save(record("r\(round)", zone: i == 0 ? "A" : "B"))
            }
        }
        let got = try Self.notifications(t).notifications
        #expect(got.count == 10)
        #expect(Set(got.map(\.subscriptionID)).count == 10)
    }

    @Test func zoneSubscriptionFiresOncePerCommit() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("Work")
        try db.saveSubscription(Subscription(zoneName: "Work", subscriptionID: "z"))
        try #require(db.modify(saving: [record("a", zone: "Work"), record("b", zone: "Work")]).error == nil)
        try db.save(record("elsewhere"))
        try db.delete(id("a", zone: "Work"))
        let got = try Self.notifications(t).notifications
        #expect(got.count == 2)
        #expect(got.allSatisfy { $0.kind == .recordZone && $0.zoneID.zoneName == "Work" && $0.recordID == nil })
        #expect(got.map(\.changeSeq) == [1, 2])
    }

    /// Cascaded deletions are deletions too.
    @Test func cascadedDeletionFires() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("parent", type: "Folder"))
        try db.save(record("child", ["folder": .reference(Reference(recordName: "parent", action: .deleteSelf))]))
        try db.saveSubscription(Subscription(recordType: "Note", options: .firesOnRecordDeletion))
        try db.delete(id("parent"))
        let got = try Self.notifications(t).notifications
        #expect(got.map { $0.recordID?.recordName } == ["child"])
        #expect(got.first?.reason == .recordDeleted)
    }

    /// DesiredKeys travel within 4 KB; what does not fit is left out and flagged.
    @Test func desiredKeysAndPayloadLimit() throws {
        let t = try TempStore()
        let db = try t.db()
        let info = NotificationInfo(alertBody: "New note", soundName: "ping.aiff", shouldBadge: true,
                                    shouldSendContentAvailable: true, desiredKeys: ["title", "body", "missing", "n"])
        try db.saveSubscription(Subscription(recordType: "Note", options: [.firesOnRecordCreation, .firesOnRecordDeletion], notificationInfo: info))
        try db.save(record("small", ["title": .string("Hi"), "body": .string("short"), "n": .int64(3), "other": .string("x")]))
        try db.save(record("big", ["title": .string("Hi"), "body": .string(String(repeating: "é", count: 3000)), "n": .int64(4)]))
        try db.delete(id("small"))
        let got = try Self.notifications(t).notifications
        try #require(got.count == 3)
        #expect(got[0].recordFields == ["title": .string("Hi"), "body": .string("short"), "n": .int64(3)])
        #expect(!got[0].isPruned)
        #expect(got[1].recordFields == ["title": .string("Hi"), "n": .int64(4)])
        #expect(got[1].isPruned)
        #expect(got[2].reason == .recordDeleted && got[2].recordFields["title"] == .string("Hi"))
        for n in got {
            #expect(JSONWriter.compact(n.json).count <= CloudNotification.payloadLimit)
            #expect(n.alertBody == "New note" && n.soundName == "ping.aiff" && n.shouldBadge && n.contentAvailable)
        }
    }

    /// A public subscription notifies its owner of anyone's changes; a private database's
    /// changes reach only its own user.
    @Test func publicSubscriptionNotifiesItsOwner() throws {
        let t = try TempStore()
        let bobPublic = try t.db(.public, user: "bob", device: "bob-phone")
        try bobPublic.saveSubscription(Subscription(recordType: "Post", subscriptionID: "posts", options: .firesOnRecordCreation))
        let r = try t.db(.public, user: "alice").modify(saving: [record("hello", type: "Post")])
        #expect(r.notificationErrors.isEmpty, "\(r.notificationErrors)")
        try t.db(.private, user: "alice").save(record("secret", type: "Post"))
        let bobs = try Self.notifications(t, user: "bob", device: "bob-phone").notifications
        #expect(bobs.map { $0.recordID?.recordName } == ["hello"])
        #expect(bobs.first?.databaseScope == .public)
        #expect(bobs.first?.changedBy == (try t.store.container().userRecordName(for: "alice")))
        #expect(try Self.notifications(t, user: "alice").notifications.isEmpty)
        // IDs are unique in the database: alice cannot take bob's, nor see or delete it.
        let alicePublic = try t.db(.public, user: "alice")
        #expect(try alicePublic.subscriptions().isEmpty)
        let taken = try alicePublic.modifySubscriptions(saving: [Subscription(recordType: "Post", subscriptionID: "posts", options: .firesOnRecordUpdate)])
        #expect(taken.saved.first?.1.error?.code == .constraintViolation)
        #expect(throws: CKError.self) { try alicePublic.deleteSubscription("posts") }
        #expect(try bobPublic.subscriptions().map(\.subscriptionID) == ["posts"])
    }

    @Test func savingChecksTheSubscription() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("n1", ["n": .int64(1)]))
        func code(_ s: Subscription, _ database: Database? = nil) -> CKError.Code? {
            do { try (database ?? db).saveSubscription(s); return nil } catch { return error.code }
        }
        #expect(code(Subscription(recordType: "Note", options: [])) == .invalidArguments)
        #expect(code(Subscription(recordType: "Note", options: .firesOnce)) == .invalidArguments)
        #expect(code(Subscription(zoneName: "Nope")) == .zoneNotFound)
        #expect(code(Subscription(recordType: "Note", options: .firesOnRecordUpdate, zoneName: "Nope")) == .zoneNotFound)
        #expect(code(Subscription(zoneName: ZoneID.defaultZoneName)) == .invalidArguments)
        try db.createZone("Work")
        #expect(code(Subscription(zoneName: "Work", options: .firesOnRecordUpdate)) == .invalidArguments)
        #expect(code(Subscription(zoneName: ZoneID.defaultZoneName), try t.db(.public)) == .invalidArguments)
        #expect(code(Subscription(recordType: "Note", predicate: try PredicateParser.parse("n BEGINSWITH 'a'"), options: .firesOnRecordUpdate)) == .invalidArguments)
        #expect(code(Subscription(recordType: "Note", predicate: try PredicateParser.parse("nope == 1"), options: .firesOnRecordUpdate)) == .invalidArguments)
        #expect(code(Subscription(recordType: "Note", subscriptionID: "", options: .firesOnRecordUpdate)) == .invalidArguments)
        let huge = NotificationInfo(alertBody: String(repeating: "a", count: 2000))
        #expect(code(Subscription(recordType: "Note", options: .firesOnRecordUpdate, notificationInfo: huge)) == .limitExceeded)
        #expect(try db.subscriptions().isEmpty)
        // A UUID when no ID is given; saving the same ID again replaces it.
        let made = try db.saveSubscription(Subscription(recordType: "Note", options: .firesOnRecordUpdate))
        #expect(UUID(uuidString: made.subscriptionID) != nil)
        var changed = made
        changed.options = .firesOnRecordDeletion
        try db.saveSubscription(changed)
        #expect(try db.subscriptions().map(\.options) == [.firesOnRecordDeletion])
        #expect(try db.subscription(made.subscriptionID).created == made.created)
    }

    /// Subscriptions survive as a file another store object (another process) reads, and an
    /// outside reader sees Web Services dictionaries.
    @Test func subscriptionsFileIsPlainJSON() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("Work")
        let p = try PredicateParser.parse("title BEGINSWITH 'a' AND n > 2")
        try db.saveSubscription(Subscription(recordType: "Note", predicate: p, subscriptionID: "q",
                                             options: [.firesOnRecordCreation, .firesOnce], zoneName: "Work",
                                             notificationInfo: NotificationInfo(alertBody: "hi", desiredKeys: ["title"])))
        try db.saveSubscription(Subscription(zoneName: "Work", subscriptionID: "z"))
        let again = try t.reopen().container().database(.private, caller: Caller(userName: "alice")).subscriptions()
        #expect(again == (try db.subscriptions()))
        #expect(again.first?.predicate == p)
        let json = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: try subscriptionsFilePath(db)))))
        let q = json["subscriptions"]?.arrayValue?.first
        #expect(q?["subscriptionType"] == .string("query"))
        #expect(q?["firesOn"] == .array([.string("create")]))
        #expect(q?["firesOnce"] == .bool(true))
        #expect(q?["zoneID"]?["zoneName"] == .string("Work"))
        #expect(q?["query"]?["predicate"] == .string(p.description))
    }

    /// Fetch since a token, mark read, badge; an expired token after the log starts again;
    /// a torn last line is ignored and cut off by the next append.
    @Test func tokensReadMarksAndTornTail() throws {
        let t = try TempStore()
        let db = try t.db()
        let log = try notificationLogFile(t.store.container(), user: "alice")
        let empty = try log.changes()
        #expect(empty.notifications.isEmpty)
        try db.saveSubscription(Subscription(recordType: "Note", options: .firesOnRecordCreation, notificationInfo: NotificationInfo(shouldBadge: true)))
        try db.save(record("a"))
        let first = try log.changes(since: empty.token)
        #expect(first.notifications.map { $0.recordID?.recordName } == ["a"])
        #expect(first.badge == 1)
        try db.save(record("b"))
        try db.save(record("c"))
        let next = try log.changes(since: first.token)
        #expect(next.notifications.map { $0.recordID?.recordName } == ["b", "c"])
        try log.markRead([first.notifications[0].notificationID, next.notifications[0].notificationID])
        let all = try log.changes()
        #expect(all.notifications.map(\.isRead) == [true, true, false])
        #expect(all.badge == 1)
        #expect(try log.changes(since: all.token).notifications.isEmpty)
        // A writer killed mid-line.
        let handle = try #require(FileHandle(forWritingAtPath: log.path))
        handle.seekToEndOfFile()
        handle.write(Data("{\"seq\":99,\"notificationID\":\"torn".utf8))
        handle.closeFile()
        #expect(try log.changes().notifications.count == 3)
        try db.save(record("d"))
        let after = try log.changes(since: all.token)
        #expect(after.notifications.map { $0.recordID?.recordName } == ["d"])
        #expect(try log.contents().badLines.isEmpty)
        // The log deleted: old tokens expire.
        try FileManager.default.removeItem(atPath: log.path)
        try db.save(record("e"))
        #expect(throws: CKError.self) { try log.changes(since: after.token) }
        do { _ = try log.changes(since: after.token) } catch { #expect(error.code == .changeTokenExpired) }
        #expect(try log.changes().notifications.count == 1)
    }

    /// A subscription is active once saved, also for another store object (another
    /// process) that had committed before it: each commit reads the subscriptions file again
    /// (under the zone's lock) rather than trusting what it read last.
    @Test func subscriptionSavedElsewhereFiresForTheNextCommit() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("before"))
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "d2"))
        try other.saveSubscription(Subscription(recordType: "Note", options: .firesOnRecordCreation))
        try db.save(record("after"))
        #expect(try Self.notifications(t).notifications.map { $0.recordID?.recordName } == ["after"])
    }

    /// A database without subscriptions commits without touching notification files.
    @Test func noSubscriptionsNoNotificationFiles() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("a"))
        try db.delete(id("a"))
        let log = try notificationLogFile(t.store.container(), user: "alice")
        #expect(!FileManager.default.fileExists(atPath: log.path))
        #expect(!FileManager.default.fileExists(atPath: try subscriptionsFilePath(db)))
    }
}

/// The file that keeps a database's subscriptions in the file backend.
func subscriptionsFilePath(_ db: Database) throws -> String {
    guard let file = db.subscriptionStorage as? SubscriptionFile else { throw CKError(.internalError, "the store's subscription storage is not a file") }
    return file.path
}
