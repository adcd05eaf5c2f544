import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudKit

/// `ckfs subscription` and `ckfs notifications`: creating, listing and deleting;
/// notifications as JSON lines, tokens, read marks, device exclusion; and `--follow` in
/// another process after a CLI save and after an edit through a mount.
@Suite struct SubscriptionCLITests {
    static func lines(_ out: CLIFixture.Output) -> [JSONValue] {
        out.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8)) }
    }

    @Test func createListDelete() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["zone", "create", "Work"]).status == 0)
        let made = cli.run(["subscription", "create", "--type", "Note", "--on", "create,update", "--on", "delete", "--once",
                            "--predicate", "n > %@", "--arg", "int:2", "--keys", "title,n", "--alert", "Changed", "--badge", "--id", "notes"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.json?["firesOn"] == .array([.string("create"), .string("update"), .string("delete")]))
        #expect(made.json?["firesOnce"] == .bool(true))
        #expect(made.json?["query"]?["predicate"] == .string("n > 2"))
        #expect(made.json?["notificationInfo"]?["shouldBadge"] == .bool(true))
        let zone = cli.run(["subscription", "create", "--zone", "Work"])
        #expect(zone.status == 0, "\(zone.stderr)")
        let zoneID = try #require(zone.json?["subscriptionID"]?.stringValue)
        #expect(UUID(uuidString: zoneID) != nil)
        let list = cli.run(["subscription", "list"])
        #expect(list.json?.arrayValue?.compactMap { $0["subscriptionID"]?.stringValue }.sorted() == [zoneID, "notes"].sorted())
        // Another user has none of them.
        #expect(cli.run(["subscription", "list"], user: "bob").json == .array([]))

        // Bad input: exit 64 from the parser, or the engine's code and a hint.
        let noTrigger = cli.run(["subscription", "create", "--type", "Note"])
        #expect(noTrigger.status == 64 && noTrigger.stderr.contains("--on"))
        let badTrigger = cli.run(["subscription", "create", "--type", "Note", "--on", "insert"])
        #expect(badTrigger.status == 64 && badTrigger.stderr.contains("insert"))
        let badPredicate = cli.run(["subscription", "create", "--type", "Note", "--on", "create", "--predicate", "a == 1 OR b == 2"])
        #expect(badPredicate.status == 64 && badPredicate.stderr.contains("OR"))
        let zoneOptions = cli.run(["subscription", "create", "--zone", "Work", "--on", "create"])
        #expect(zoneOptions.status == 64)
        let noZone = cli.run(["subscription", "create", "--zone", "Nope"])
        #expect(noZone.status == 1 && noZone.stderr.contains("zoneNotFound"))
        let defaultZone = cli.run(["subscription", "create", "--zone", ZoneID.defaultZoneName])
        #expect(defaultZone.status == 1 && defaultZone.stderr.contains("TRUEPREDICATE"))

        let deleted = cli.run(["subscription", "delete", "notes", zoneID])
        #expect(deleted.status == 0 && deleted.stdout == "deleted notes\ndeleted \(zoneID)\n")
        let again = cli.run(["subscription", "delete", "notes"])
        #expect(again.status == 1 && again.stderr.contains("unknownItem"))
        #expect(cli.run(["subscription", "list"]).json == .array([]))
    }

    /// `--whole-database`: one notification per commit in any zone of the private database,
    /// listed with type database; refused in the public database and with query options.
    @Test func aDatabaseSubscriptionHearsEveryZone() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["zone", "create", "Work"]).status == 0)
        let made = cli.run(["subscription", "create", "--whole-database", "--id", "everything"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.json?["subscriptionType"] == .string("database") && made.json?["zoneID"] == nil)
        #expect(cli.run(["record", "save", "-", "--zone", "Work", "--device", "laptop"], input: #"{"recordType": "Note", "recordName": "w", "fields": {}}"#).status == 0)
        #expect(cli.run(["record", "save", "-", "--device", "laptop"], input: #"{"recordType": "Note", "recordName": "d", "fields": {}}"#).status == 0)
        let heard = Self.lines(cli.run(["notifications"]))
        #expect(heard.map { $0["type"]?.stringValue } == ["database", "database"])
        #expect(heard.map { $0["zoneID"]?["zoneName"]?.stringValue } == ["Work", ZoneID.defaultZoneName])
        #expect(heard.allSatisfy { $0["subscriptionID"] == .string("everything") })
        let mixed = cli.run(["subscription", "create", "--whole-database", "--zone", "Work"])
        #expect(mixed.status == 64 && mixed.stderr.contains("--whole-database"))
        let pub = cli.run(["subscription", "create", "--whole-database", "--database", "public"])
        #expect(pub.status == 1 && pub.stderr.contains("private database"))
    }

    /// `--only-type`: a database or zone subscription that hears only of changes to records of
    /// one type, kept in subscriptions.json as its `recordType`.
    @Test func aSubscriptionLimitedToATypeHearsOnlyThatType() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["zone", "create", "Work"]).status == 0)
        let db = cli.run(["subscription", "create", "--whole-database", "--only-type", "Note", "--id", "notes"])
        #expect(db.status == 0, "\(db.stderr)")
        #expect(db.json?["subscriptionType"] == .string("database") && db.json?["recordType"] == .string("Note"))
        let zone = cli.run(["subscription", "create", "--zone", "Work", "--only-type", "Task", "--id", "tasks"])
        #expect(zone.status == 0 && zone.json?["recordType"] == .string("Task"), "\(zone.stderr)")
        for (type, name, zone) in [("Task", "t1", "Work"), ("Note", "n1", "Work"), ("Task", "t2", ZoneID.defaultZoneName)] {
            let saved = cli.run(["record", "save", "-", "--zone", zone, "--device", "laptop"], input: #"{"recordType": "\#(type)", "recordName": "\#(name)", "fields": {}}"#)
            #expect(saved.status == 0, "\(saved.stderr)")
        }
        #expect(cli.run(["record", "delete", "n1", "--zone", "Work", "--device", "laptop"]).status == 0)
        let heard = Self.lines(cli.run(["notifications"]))
        // t1: tasks; n1 saved: notes; t2 (default zone): nobody; n1 deleted: notes.
        #expect(heard.map { $0["subscriptionID"]?.stringValue } == ["tasks", "notes", "notes"], "\(heard)")
        // The limit is kept in the file, for other processes and after a restart.
        let files = FileManager.default.enumerator(atPath: cli.store)?.compactMap { $0 as? String }.filter { $0.hasSuffix("/subscriptions.json") } ?? []
        let kept = try files.map { try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: cli.store + "/" + $0)))) }
        #expect(kept.count == 1 && kept.first?["subscriptions"]?.arrayValue?.compactMap { $0["recordType"]?.stringValue }.sorted() == ["Note", "Task"], "\(kept)")
        let mixed = cli.run(["subscription", "create", "--type", "Note", "--on", "create", "--only-type", "Note"])
        #expect(mixed.status == 64 && mixed.stderr.contains("--only-type"))
        let bad = cli.run(["subscription", "create", "--whole-database", "--only-type", "no spaces"])
        #expect(bad.status == 1, "\(bad.stdout)")
    }

    @Test func notificationsTokensReadMarksAndDevices() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["subscription", "create", "--type", "Note", "--on", "create,update,delete", "--keys", "title", "--badge"]).status == 0)
        #expect(cli.run(["record", "save", "-", "--device", "laptop"], input: #"{"recordType": "Note", "recordName": "a", "fields": {"title": "one"}}"#).status == 0)
        #expect(cli.run(["record", "save", "-", "--device", "phone"], input: #"{"recordType": "Note", "recordName": "b", "fields": {"title": "two"}}"#).status == 0)
        #expect(cli.run(["record", "delete", "a", "--device", "phone"]).status == 0)
        let all = Self.lines(cli.run(["notifications"]))
        #expect(all.map { $0["reason"]?.stringValue } == ["recordCreated", "recordCreated", "recordDeleted"])
        #expect(all.map { $0["recordName"]?.stringValue } == ["a", "b", "a"])
        #expect(all[0]["fields"]?["title"]?["value"] == .string("one"))
        #expect(all.allSatisfy { $0["isRead"] == .bool(false) && $0["shouldBadge"] == .bool(true) })
        // A client is not notified of its own changes.
        #expect(Self.lines(cli.run(["notifications", "--device", "phone"])).map { $0["recordName"]?.stringValue } == ["a"])
        #expect(Self.lines(cli.run(["notifications", "--device", "laptop"])).map { $0["recordName"]?.stringValue } == ["b", "a"])
        // Going on from a token.
        let token = try #require(all[0]["token"]?.stringValue)
        #expect(Self.lines(cli.run(["notifications", "--since", token])).count == 2)
        let bad = cli.run(["notifications", "--since", "nonsense"])
        #expect(bad.status == 1 && bad.stderr.contains("not a notification token"))
        // As push payloads: what a device receives, which CKNotification reads back.
        let pushes = Self.lines(cli.run(["notifications", "--apns", "--device", "laptop"]))
        #expect(pushes.map { $0["ck"]?["qry"]?["rid"]?.stringValue } == ["b", "a"])
        #expect(pushes.map { $0["ck"]?["qry"]?["fo"]?.int64Value } == [1, 3])
        #expect(pushes.allSatisfy { $0["aps"]?["badge"] == .int(1) && $0["ck"]?["cid"] == .string("iCloud.local.ckfs") })
        let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(JSONWriter.compact(pushes[0]))) as? [String: Any])
        let pushed = try #require(CKNotification(fromRemoteNotificationDictionary: userInfo) as? CKQueryNotification)
        #expect(pushed.recordID?.recordName == "b" && pushed.recordFields?["title"] as? String == "two" && pushed.queryNotificationReason == .recordCreated)
        // Marked read once printed.
        #expect(Self.lines(cli.run(["notifications", "--unread", "--mark-read", "--device", "laptop"])).count == 2)
        let unread = Self.lines(cli.run(["notifications", "--unread"]))
        #expect(unread.map { $0["recordName"]?.stringValue } == ["a"])
        // Outside readers see one JSON object per line.
        let log = try notificationLogFile(Store.open(at: cli.store).container(), user: "alice").path
        let count = try runPython("import json\nlines = open('\(log)').read().splitlines()\nprint(sum(1 for l in lines if 'notificationID' in json.loads(l)))")
        #expect(String(decoding: count, as: UTF8.self) == "3\n")
    }

    /// `--follow` in another process prints a notification as soon as a CLI save makes it.
    @Test func followSeesACLISave() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["subscription", "create", "--type", "Note", "--on", "create,update"]).status == 0)
        let follower = try ClientProcess(arguments: ["notifications", "--follow", "--store", cli.store, "--user", "alice"])
        defer { follower.process.signal(SIGTERM) }
        #expect(cli.run(["record", "save", "-"], input: #"{"recordType": "Note", "recordName": "first", "fields": {"n": 1}}"#).status == 0)
        let first = follower.waitFor({ $0["recordName"] == .string("first") })
        #expect(first?["reason"] == .string("recordCreated"))
        #expect(cli.run(["record", "save", "-", "--policy", "all-keys"], input: #"{"recordType": "Note", "recordName": "first", "fields": {"n": 2}}"#).status == 0)
        #expect(follower.waitFor({ $0["reason"] == .string("recordUpdated") }) != nil)
        // Another user's changes never reach this user's follower.
        #expect(cli.run(["subscription", "create", "--type", "Note", "--on", "create"], user: "bob").status == 0)
        #expect(cli.run(["record", "save", "-"], input: #"{"recordType": "Note", "recordName": "bobs"}"#, user: "bob").status == 0)
        #expect(follower.waitFor({ $0["recordName"] == .string("bobs") }, seconds: 1) == nil)
        #expect(follower.process.isRunning)
    }
}

/// Notifications from a mount: an edit through the mount is a save from the mount's client, and reaches a
/// follower in another process.
@Suite(.serialized) struct SubscriptionMountTests {
    @Test func followSeesAMountEdit() throws {
        let m = try MountFixture()
        let sub = m.cli(["subscription", "create", "--type", "Note", "--on", "update", "--zone", "Notes", "--keys", "title"])
        #expect(sub.status == 0, "\(sub.stderr)")
        let follower = try ClientProcess(arguments: ["notifications", "--follow", "--store", m.store, "--user", MountFixture.user])
        defer { follower.process.signal(SIGTERM) }
        let file = m.privateNotes + "/Note/groceries.json"
        let edit = m.sh("sed -i 's/\"Groceries\"/\"Groceries for Sunday\"/' '\(file)'")
        #expect(edit.status == 0, "\(edit.stderr)")
        let got = try #require(follower.waitFor({ $0["recordName"] == .string("groceries") }))
        #expect(got["reason"] == .string("recordUpdated"))
        #expect(got["fields"]?["title"]?["value"] == .string("Groceries for Sunday"))
        #expect(got["device"] == .string(Caller.mountDeviceID(m.mount)))
    }
}
