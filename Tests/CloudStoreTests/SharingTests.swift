import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Shares between three users of one container: an owner, a read-write participant and a
/// read-only one; hierarchies by `parent`, zone-wide shares, acceptance, leaving, removal.
@Suite struct SharingTests {
    struct Three {
        let t: TempStore
        let c: Container
        let owner: Database
        let ownerCaller = Caller(userName: "olivia")
        let writer = Caller(userName: "wes")
        let reader = Caller(userName: "rita")
        let stranger = Caller(userName: "sam")
        var wesName: String { try! c.userRecordName(for: writer) }
        var ritaName: String { try! c.userRecordName(for: reader) }

        init() throws {
            t = try TempStore()
            c = try t.store.container()
            for name in ["olivia", "wes", "rita", "sam"] { try c.addUser(name, emails: ["\(name)@example.com"]) }
            owner = try c.database(.private, caller: Caller(userName: "olivia"))
            try owner.createZone("Lists")
        }

        func shared(_ caller: Caller) throws -> SharedDatabase { try c.sharedDatabase(caller: caller) }
    }

    func item(_ name: String, parent: String? = nil, text: String = "", in db: Database) -> Record {
        var r = Record(recordType: "Item", recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: "Lists")))
        r["text"] = .string(text)
        r.parent = parent
        return r
    }

    func share(_ name: String = "share-1", root: String?, participants: [ShareInfo.Participant], publicPermission: ShareInfo.Permission = .none) -> Record {
        var r = Record(recordType: ShareInfo.recordType, recordID: RecordID(recordName: name, zoneID: ZoneID(zoneName: "Lists")))
        r.shareInfo = ShareInfo(publicPermission: publicPermission, participants: participants, rootRecordName: root)
        return r
    }

    func code(_ body: () throws -> Void) -> CKError.Code? {
        do { try body() } catch let e as CKError { return e.code } catch { return .internalError }
        return nil
    }

    /// The owner shares a list and its items; each participant sees exactly the hierarchy, only
    /// once accepted; the writer edits and adds, the reader cannot; a record outside stays hidden.
    @Test func aHierarchyShareGrantsWhatItSays() throws {
        let s = try Three()
        let list = item("list", text: "groceries", in: s.owner)
        let milk = item("milk", parent: "list", text: "milk", in: s.owner)
        let diary = item("diary", text: "private", in: s.owner)
        try s.owner.modify(saving: [list, milk, diary]).error.map { throw $0 }
        let shareRecord = share(root: "list", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .accepted),
            .init(userRecordName: s.ritaName, role: .privateUser, permission: .readOnly, acceptanceStatus: .pending),
        ])
        try s.owner.modify(saving: [shareRecord]).error.map { throw $0 }
        let stored = try s.owner.record(for: RecordID(recordName: "share-1", zoneID: ZoneID(zoneName: "Lists")))
        let info = try #require(stored.shareInfo)
        #expect(info.owner?.userRecordName == s.owner.userRecordName)
        #expect(info.participant(s.wesName)?.acceptanceStatus == .pending, "the owner cannot accept for a participant")
        #expect(!info.shortGUID.isEmpty)
        #expect(try s.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists"))).share == "share-1")
        // The file holds it all, readable by any JSON reader.
        // (Record files are written behind the commit: wait for it.)
        let file = StoreLayout.recordFile(s.owner.zoneDirectory("Lists"), name: "share-1")
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: file) { usleep(10_000) }
        let json = try JSONParser.parse(Array(try #require(FileManager.default.contents(atPath: file))))
        #expect(json["participants"]?.arrayValue?.count == 3)
        #expect(json["rootRecordName"]?.stringValue == "list")

        // Before acceptance nothing shows.
        let wes = try s.shared(s.writer), rita = try s.shared(s.reader), sam = try s.shared(s.stranger)
        #expect(try wes.zones().isEmpty)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        #expect(wes.fetch([RecordID(recordName: "list", zoneID: zone)])[0].1.error?.code == .zoneNotFound)

        let url = ShareURL.make(container: s.c.identifier, shortGUID: info.shortGUID)
        try s.c.acceptShare(url: url, caller: s.writer)
        try s.c.acceptShare(url: url, caller: s.reader)
        #expect(code { try s.c.acceptShare(url: url, caller: s.stranger) } == .permissionFailure, "sam was not added")
        #expect(try wes.zones().map(\.zoneID) == [zone])
        #expect(try sam.zones().isEmpty)

        // Each participant reads the hierarchy and the share, not the diary.
        for db in [wes, rita] {
            #expect(try db.fetch([RecordID(recordName: "milk", zoneID: zone)])[0].1.get()["text"] == .string("milk"))
            #expect(try db.fetch([RecordID(recordName: "share-1", zoneID: zone)])[0].1.get().shareInfo != nil)
            #expect(db.fetch([RecordID(recordName: "diary", zoneID: zone)])[0].1.error?.code == .unknownItem)
            let all = try db.changes(in: zone, since: nil)
            #expect(Set(all.changed.map(\.recordID.recordName)) == ["list", "milk", "share-1"])
        }

        // The writer edits and adds under the list; the new record is the owner's, stamped by wes.
        var milk2 = try wes.fetch([RecordID(recordName: "milk", zoneID: zone)])[0].1.get()
        milk2["text"] = .string("oat milk")
        var eggs = item("eggs", parent: "list", text: "eggs", in: s.owner)
        eggs = eggs.inZone(zone)
        try wes.modify(saving: [milk2, eggs]).error.map { throw $0 }
        let ownerEggs = try s.owner.record(for: RecordID(recordName: "eggs", zoneID: ZoneID(zoneName: "Lists")))
        #expect(ownerEggs.created?.userRecordName == s.wesName)
        // ...but not outside the hierarchy, nor the share, nor the root's deletion.
        let loose = item("loose", text: "x", in: s.owner).inZone(zone)
        #expect(try wes.modify(saving: [loose]).saveResults[0].1.error?.code == .permissionFailure)
        #expect(try wes.modify(saving: [], deleting: [RecordID(recordName: "list", zoneID: zone)]).deleteResults[0].1.error?.code == .permissionFailure)
        #expect(try wes.modify(saving: [], deleting: [RecordID(recordName: "diary", zoneID: zone)]).deleteResults[0].1.error?.code == .unknownItem)

        // The reader cannot change anything.
        var readerEdit = try rita.fetch([RecordID(recordName: "eggs", zoneID: zone)])[0].1.get()
        readerEdit["text"] = .string("rita was here")
        #expect(try rita.modify(saving: [readerEdit]).saveResults[0].1.error?.code == .permissionFailure)
        #expect(try rita.modify(saving: [], deleting: [RecordID(recordName: "eggs", zoneID: zone)]).deleteResults[0].1.error?.code == .permissionFailure)

        // Changes since a token: the writer's edit reaches the reader; the owner's diary edit does not.
        let token = try rita.changes(in: zone, since: nil).token
        var diary2 = try s.owner.record(for: RecordID(recordName: "diary", zoneID: ZoneID(zoneName: "Lists")))
        diary2["text"] = .string("secret")
        try s.owner.save(diary2)
        try wes.modify(saving: [], deleting: [RecordID(recordName: "eggs", zoneID: zone)]).error.map { throw $0 }
        let later = try rita.changes(in: zone, since: token)
        #expect(later.changed.isEmpty)
        #expect(later.deleted.map(\.recordName) == ["eggs"])

        // Quota: the writer's saves count toward the owner's private database.
        #expect(try s.owner.usage() > 0)
        let wesOwn = try s.c.database(.private, caller: s.writer)
        #expect(try wesOwn.usage() == 0)
    }

    /// A participant who left comes back only as anyone with the URL does: through a public
    /// share, as a public user with its public permission, never with the permission held
    /// before; a share whose public permission is none (or unknown) keeps them out.
    @Test func oneWhoLeftComesBackOnlyThroughThePublicPermission() throws {
        let s = try Three()
        try s.owner.modify(saving: [item("list", in: s.owner), item("a", parent: "list", in: s.owner)]).error.map { throw $0 }
        var shareRecord = share(root: "list", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .pending),
        ], publicPermission: .unknown)
        shareRecord = try s.owner.modify(saving: [shareRecord]).saveResults[0].1.get()
        let url = ShareURL.make(container: s.c.identifier, shortGUID: shareRecord.shareInfo!.shortGUID)
        try s.c.acceptShare(url: url, caller: s.writer)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        try s.shared(s.writer).modify(saving: [], deleting: [RecordID(recordName: "share-1", zoneID: zone)]).error.map { throw $0 }
        #expect(try s.owner.record(for: shareRecord.recordID).shareInfo?.participant(s.wesName)?.acceptanceStatus == .removed)

        #expect(code { _ = try s.c.acceptShare(url: url, caller: s.writer) } == .permissionFailure, "an unknown public permission lets no one in")
        #expect(try s.shared(s.writer).zones().isEmpty)

        var opened = try s.owner.record(for: shareRecord.recordID)
        opened.shareInfo!.publicPermission = .readOnly
        try s.owner.save(opened)
        try s.c.acceptShare(url: url, caller: s.writer)
        let back = try #require(try s.owner.record(for: shareRecord.recordID).shareInfo?.participant(s.wesName))
        #expect(back.acceptanceStatus == .accepted)
        #expect(back.permission == .readOnly && back.role == .publicUser, "back as a public user, not with readWrite: \(back)")
        var edit = try s.shared(s.writer).fetch([RecordID(recordName: "a", zoneID: zone)])[0].1.get()
        edit["text"] = .string("changed")
        #expect(try s.shared(s.writer).modify(saving: [edit]).saveResults[0].1.error?.code == .permissionFailure, "read only now")
    }

    /// Removal by the owner, leaving by the participant, deleting the share and deleting the
    /// root each end access; the database change feed reports the zone gone.
    @Test func accessEndsWithRemovalLeavingAndDeletion() throws {
        let s = try Three()
        try s.owner.modify(saving: [item("list", in: s.owner), item("a", parent: "list", in: s.owner)]).error.map { throw $0 }
        var shareRecord = share(root: "list", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .pending),
            .init(userRecordName: s.ritaName, role: .privateUser, permission: .readOnly, acceptanceStatus: .pending),
        ])
        shareRecord = try s.owner.modify(saving: [shareRecord]).saveResults[0].1.get()
        let url = ShareURL.make(container: s.c.identifier, shortGUID: shareRecord.shareInfo!.shortGUID)
        try s.c.acceptShare(url: url, caller: s.writer)
        try s.c.acceptShare(url: url, caller: s.reader)
        let wes = try s.shared(s.writer), rita = try s.shared(s.reader)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        let ritaToken = try rita.databaseChanges(since: nil).token
        #expect(try rita.databaseChanges(since: nil).changed == [zone])

        // The owner removes rita.
        var edited = try s.owner.record(for: shareRecord.recordID)
        edited.shareInfo!.participants.removeAll { $0.userRecordName == s.ritaName }
        try s.owner.save(edited)
        #expect(try rita.zones().isEmpty)
        #expect(rita.fetch([RecordID(recordName: "a", zoneID: zone)])[0].1.error?.code == .zoneNotFound)
        #expect(try rita.databaseChanges(since: ritaToken).deleted == [zone])
        #expect(try wes.zones() == [try s.owner.zone("Lists")].map { RecordZone(zoneID: zone, capabilities: $0.capabilities, created: $0.created) })

        // Wes leaves by deleting the share in his shared database; the share stays.
        try wes.modify(saving: [], deleting: [RecordID(recordName: "share-1", zoneID: zone)]).error.map { throw $0 }
        #expect(try wes.zones().isEmpty)
        #expect(try s.owner.record(for: shareRecord.recordID).shareInfo?.participant(s.wesName)?.acceptanceStatus == .removed)

        // Deleting the root deletes the share.
        try s.owner.delete(RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
        #expect(s.owner.fetch([shareRecord.recordID])[0].1.error?.code == .unknownItem)
    }

    /// Database subscriptions of the shared database: a participant hears of changes to what
    /// is shared with them (and of being removed, and of the zone's deletion), never of the
    /// owner's other records; someone not on the share hears nothing; query subscriptions are
    /// refused there, as CloudKit's; the owner's own subscriptions hear of participants' saves.
    @Test func notificationsReachTheRightUsers() throws {
        let s = try Three()
        try s.owner.modify(saving: [item("list", in: s.owner), item("a", parent: "list", in: s.owner), item("diary", in: s.owner)]).error.map { throw $0 }
        let shareRecord = try s.owner.modify(saving: [share(root: "list", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .pending),
            .init(userRecordName: s.ritaName, role: .privateUser, permission: .readOnly, acceptanceStatus: .pending),
        ])]).saveResults[0].1.get()
        let url = ShareURL.make(container: s.c.identifier, shortGUID: shareRecord.shareInfo!.shortGUID)
        try s.c.acceptShare(url: url, caller: s.writer)
        try s.c.acceptShare(url: url, caller: s.reader)
        for caller in [s.writer, s.reader, s.stranger] {
            try s.shared(caller).subscriptions.saveSubscription(.database(subscriptionID: "shared-changes"))
        }
        #expect(code { try s.shared(s.writer).subscriptions.saveSubscription(Subscription(recordType: "Item", options: .firesOnRecordCreation)) } == .invalidArguments)
        try s.owner.saveSubscription(Subscription(zoneName: "Lists", subscriptionID: "owner-zone"))
        func count(_ caller: Caller) throws -> Int {
            try s.c.notificationLog(caller: caller).changes().notifications.filter { $0.databaseScope == .shared }.count
        }
        func ownerCount() throws -> Int {
            try s.c.notificationLog(caller: s.ownerCaller).changes().notifications.filter { $0.subscriptionID == "owner-zone" }.count
        }
        let (w0, r0, o0) = (try count(s.writer), try count(s.reader), try ownerCount())

        // The owner's diary: nobody else hears of it.
        var diary = try s.owner.record(for: RecordID(recordName: "diary", zoneID: ZoneID(zoneName: "Lists")))
        diary["text"] = .string("secret")
        try s.owner.save(diary)
        #expect(try count(s.writer) == w0 && count(s.reader) == r0)

        // A shared item: both participants hear, with the owner's zone; sam hears nothing.
        var a = try s.owner.record(for: RecordID(recordName: "a", zoneID: ZoneID(zoneName: "Lists")))
        a["text"] = .string("changed")
        try s.owner.save(a)
        #expect(try count(s.writer) == w0 + 1 && count(s.reader) == r0 + 1)
        let heard = try #require(try s.c.notificationLog(caller: s.reader).changes().notifications.last)
        #expect(heard.zoneID == ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName))
        #expect(try count(s.stranger) == 0)

        // Wes changes it: the owner's zone subscription hears, and rita.
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        var fromWes = try s.shared(s.writer).fetch([RecordID(recordName: "a", zoneID: zone)])[0].1.get()
        fromWes["text"] = .string("by wes")
        let o1 = try ownerCount()
        #expect(o1 == o0 + 2, "the owner's own two saves")
        try s.shared(s.writer).modify(saving: [fromWes]).error.map { throw $0 }
        #expect(try ownerCount() == o1 + 1)
        #expect(try count(s.reader) == r0 + 2)

        // Rita removed: she hears of it (so she fetches and finds the zone gone).
        var edited = try s.owner.record(for: shareRecord.recordID)
        edited.shareInfo!.participants.removeAll { $0.userRecordName == s.ritaName }
        try s.owner.save(edited)
        #expect(try count(s.reader) == r0 + 3)
        // Deleting the zone tells wes.
        let beforeDelete = try count(s.writer)
        try s.owner.deleteZone("Lists")
        #expect(try count(s.writer) == beforeDelete + 1)
        #expect(try count(s.stranger) == 0)
    }

    /// What a participant must never learn of records not shared with them: not through a
    /// query cursor or a first-fetch token (their text holds the last record walked), nor a
    /// parent's existence, a delete with a change tag, a save's type error, or a cascade; and
    /// a read-write participant cannot move the root out from under its share.
    @Test func nothingUnsharedLeaks() throws {
        let s = try Three()
        var records = [item("list", in: s.owner)]
        for i in 0..<6 {
            records.append(item("shared-\(i)", parent: "list", text: "s\(i)", in: s.owner))
            records.append(item("secret-\(i)", text: "x\(i)", in: s.owner))
        }
        try s.owner.modify(saving: records).error.map { throw $0 }
        let shareRecord = try s.owner.modify(saving: [share(root: "list", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .pending)])]).saveResults[0].1.get()
        try s.c.acceptShare(url: shareRecord.shareInfo!.shortGUID, caller: s.writer)
        let wes = try s.shared(s.writer)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        let db = try wes.database(owner: s.owner.userRecordName)
        func leaks(_ text: String) -> Bool {
            var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while b64.count % 4 != 0 { b64 += "=" }
            let decoded = Data(base64Encoded: b64).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let hex = Array("secret".utf8).map { String(format: "%02x", $0) }.joined()
            return (text + decoded).contains("secret") || text.lowercased().contains(hex)
        }

        // Query pages of one, sorted so that secrets come between: only shared records, and
        // no cursor names a secret.
        var cursor: QueryCursor?
        var seen: [String] = []
        repeat {
            let page = try db.query(RecordQuery(recordType: "Item", sortDescriptors: [QuerySortDescriptor(key: "text")]), in: "Lists", limit: 1, cursor: cursor)
            seen += page.records.map(\.recordID.recordName)
            cursor = page.cursor
            if let c = cursor { #expect(!leaks(c.text), "a cursor names a record not shared: \(c.text)") }
        } while cursor != nil
        #expect(seen.sorted() == ["list"] + (0..<6).map { "shared-\($0)" })
        // A page holding every shared record says no more remain, though secrets follow it.
        let whole = try db.query(RecordQuery(recordType: "Item", sortDescriptors: [QuerySortDescriptor(key: "text")]), in: "Lists", limit: 7)
        #expect(whole.records.count == 7 && whole.cursor == nil)
        #expect(code { _ = try db.queryAllZones(RecordQuery(recordType: "Item")) } == .invalidArguments)
        // A first fetch a record at a time: the same, and no token names a secret.
        var token: ChangeToken?
        var fetched: [String] = []
        repeat {
            let page = try db.changes(in: "Lists", since: token, limit: 1)
            fetched += page.changed.map(\.recordID.recordName)
            token = page.token
            #expect(!leaks(page.token.description), "a token names a record not shared: \(page.token)")
            if !page.moreComing { break }
        } while true
        #expect(Set(fetched) == Set(["list", "share-1"] + (0..<6).map { "shared-\($0)" }))
        #expect(try !db.changes(in: "Lists", since: nil, limit: 8).moreComing, "secrets after the last shared name say nothing")
        // A missing record and a secret one read alike.
        let missing = db.fetch([RecordID(recordName: "nowhere", zoneID: zone)])[0].1.error
        let secret = db.fetch([RecordID(recordName: "secret-4", zoneID: zone)])[0].1.error
        #expect(missing?.code == secret?.code && missing?.message == secret?.message.replacingOccurrences(of: "secret-4", with: "nowhere"))
        // A DELETE_SELF reference to a secret record is to nothing.
        var pointer = item("pointer", parent: "list", in: s.owner).inZone(zone)
        pointer["to"] = .reference(Reference(recordName: "secret-5", action: .deleteSelf))
        #expect(try wes.modify(saving: [pointer]).saveResults[0].1.error?.code == .referenceViolation)

        // A parent not shared is not there; a delete with a tag, or a save of another type,
        // does not tell of a secret record.
        let under = item("probe", parent: "secret-0", in: s.owner).inZone(zone)
        #expect(try wes.modify(saving: [under]).saveResults[0].1.error?.code == .referenceViolation)
        var tagged = ModifyOptions()
        tagged.deleteChangeTags[RecordID(recordName: "secret-1", zoneID: zone)] = "999"
        let tagResult = try db.modify(saving: [], deleting: [RecordID(recordName: "secret-1", zoneID: zone)], options: tagged)
        #expect(tagResult.deleteResults[0].1.error?.code == .unknownItem)
        #expect(tagResult.deleteResults[0].1.error?.serverRecordValue == nil)
        let otherType = Record(recordType: "Note", recordID: RecordID(recordName: "secret-2", zoneID: zone))
        let typed = try wes.modify(saving: [otherType]).saveResults[0].1.error
        #expect(typed?.code == .permissionFailure && typed?.message.contains("Item") == false, "\(String(describing: typed))")

        // The root stays where its owner put it, and shows no parent (one not shared) to wes;
        // his edit of it keeps the owner's parent.
        var moved = try s.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
        moved.parent = "secret-0"
        try s.owner.save(moved)
        var root = try wes.fetch([RecordID(recordName: "list", zoneID: zone)])[0].1.get()
        #expect(root.parent == nil)
        root["text"] = .string("edited by wes")
        let edit = try wes.modify(saving: [root])
        #expect(edit.error == nil, "\(String(describing: edit.saveResults[0].1.error))")
        #expect(try s.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists"))).parent == "secret-0")
        root = try wes.fetch([RecordID(recordName: "list", zoneID: zone)])[0].1.get()
        root.parent = "shared-0"
        #expect(try wes.modify(saving: [root]).saveResults[0].1.error?.code == .permissionFailure)

        // A DELETE_SELF reference from a secret record: wes's delete would reach it, and is refused.
        var hook = try s.owner.record(for: RecordID(recordName: "secret-3", zoneID: ZoneID(zoneName: "Lists")))
        hook["owner"] = .reference(Reference(recordName: "shared-3", action: .deleteSelf))
        try s.owner.save(hook)
        #expect(try wes.modify(saving: [], deleting: [RecordID(recordName: "shared-3", zoneID: zone)]).deleteResults[0].1.error?.code == .permissionFailure)
        #expect(try s.owner.fetch([RecordID(recordName: "secret-3", zoneID: ZoneID(zoneName: "Lists"))])[0].1.get().recordID.recordName == "secret-3")
    }

    /// Apple's rules for shares within one zone: a record takes part in one share, so a
    /// child's share blocks sharing its ancestor, two shares cannot claim one root in one
    /// operation, and the owner's subscriptions see a participant's save as in their private
    /// database; leaving a share makes a new version of it, so the owner's stale save fails.
    @Test func oneShareARecordAndVersionsOfShares() throws {
        let s = try Three()
        try s.owner.modify(saving: [item("list", in: s.owner), item("child", parent: "list", in: s.owner), item("other", in: s.owner)]).error.map { throw $0 }
        try s.owner.modify(saving: [share("child-share", root: "child", participants: [])]).error.map { throw $0 }
        #expect(try s.owner.modify(saving: [share("list-share", root: "list", participants: [])]).saveResults[0].1.error?.code == .alreadyShared)
        let two = try s.owner.modify(saving: [share("a", root: "other", participants: []), share("b", root: "other", participants: [])])
        #expect(two.saveResults.contains { $0.1.error?.code == .alreadyShared })
        #expect(try s.owner.record(for: RecordID(recordName: "other", zoneID: ZoneID(zoneName: "Lists"))).share == nil, "the atomic batch saved nothing")

        let shared = try s.owner.modify(saving: [share("other-share", root: "other", participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .pending)])]).saveResults[0].1.get()
        try s.c.acceptShare(url: shared.shareInfo!.shortGUID, caller: s.writer)
        try s.owner.saveSubscription(Subscription(zoneName: "Lists", subscriptionID: "owner-zone"))
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        var other = try s.shared(s.writer).fetch([RecordID(recordName: "other", zoneID: zone)])[0].1.get()
        other["text"] = .string("by wes")
        try s.shared(s.writer).modify(saving: [other]).error.map { throw $0 }
        let heard = try s.c.notificationLog(caller: s.ownerCaller).changes().notifications.filter { $0.subscriptionID == "owner-zone" }
        #expect(heard.last?.databaseScope == .private)

        let stale = try s.owner.record(for: shared.recordID)
        try s.shared(s.writer).modify(saving: [], deleting: [RecordID(recordName: "other-share", zoneID: zone)]).error.map { throw $0 }
        var edit = stale
        edit["cloudkit.title"] = .string("renamed")
        #expect(throws: CKError.self, "the share changed when wes left") { try s.owner.save(edit) }
        #expect(try s.owner.record(for: shared.recordID).shareInfo?.participant(s.wesName)?.acceptanceStatus == .removed)
        // The owner's next edit keeps him out; giving his entry another status invites him again.
        var fresh = try s.owner.record(for: shared.recordID)
        fresh["cloudkit.title"] = .string("renamed")
        fresh = try s.owner.save(fresh)
        #expect(fresh.shareInfo?.participant(s.wesName)?.acceptanceStatus == .removed)
        let i = try #require(fresh.shareInfo?.participants.firstIndex { $0.userRecordName == s.wesName })
        fresh.shareInfo!.participants[i].acceptanceStatus = .pending
        #expect(try s.owner.save(fresh).shareInfo?.participant(s.wesName)?.acceptanceStatus == .pending)

        // The owner cannot move one share's root under another's.
        var moving = try s.owner.record(for: RecordID(recordName: "other", zoneID: ZoneID(zoneName: "Lists")))
        moving.parent = "child"
        #expect(try s.owner.modify(saving: [moving]).saveResults[0].1.error?.code == .alreadyShared)
        // Not atomic: a share whose root fails with it is not saved, and the root keeps none.
        var badRoot = item("bad", in: s.owner)
        badRoot["n"] = .double(.infinity)
        let halves = try s.owner.modify(saving: [badRoot, share("bad-share", root: "bad", participants: [])], options: ModifyOptions(atomic: false))
        #expect(halves.saveResults[0].1.error?.code == .invalidArguments)
        #expect(halves.saveResults[1].1.error?.code == .referenceViolation)
        #expect(s.owner.fetch([RecordID(recordName: "bad-share", zoneID: ZoneID(zoneName: "Lists"))])[0].1.error?.code == .unknownItem)
    }

    /// A zone-wide share reaches every record of the zone; hierarchy shares cannot be mixed in;
    /// a public permission lets anyone with the URL join; deleting the share clears the root.
    @Test func zoneWideAndPublicShares() throws {
        let s = try Three()
        try s.owner.modify(saving: [item("x", in: s.owner), item("y", in: s.owner)]).error.map { throw $0 }
        let zoneShare = share(ShareInfo.zoneWideRecordName, root: nil, participants: [], publicPermission: .readOnly)
        let saved = try s.owner.modify(saving: [zoneShare]).saveResults[0].1.get()
        // A hierarchy share in a zone shared whole is refused.
        #expect(try s.owner.modify(saving: [share("share-2", root: "x", participants: [])]).saveResults[0].1.error?.code == .serverRejectedRequest)
        let url = ShareURL.make(container: s.c.identifier, shortGUID: saved.shareInfo!.shortGUID)
        try s.c.acceptShare(url: url, caller: s.stranger)
        let sam = try s.shared(s.stranger)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        #expect(Set(try sam.changes(in: zone, since: nil).changed.map(\.recordID.recordName)) == ["x", "y", ShareInfo.zoneWideRecordName])
        #expect(try s.owner.record(for: saved.recordID).shareInfo?.participant(try s.c.userRecordName(for: s.stranger))?.role == .publicUser)
        var y = try sam.fetch([RecordID(recordName: "y", zoneID: zone)])[0].1.get()
        y["text"] = .string("changed")
        #expect(try sam.modify(saving: [y]).saveResults[0].1.error?.code == .permissionFailure, "the public permission is read-only")

        // Hierarchy share rules in another zone: the root must exist, and may be shared once.
        try s.owner.createZone("Other")
        func inOther(_ r: Record) -> Record { r.inZone(ZoneID(zoneName: "Other")) }
        #expect(try s.owner.modify(saving: [inOther(share("s1", root: "missing", participants: []))]).saveResults[0].1.error?.code == .referenceViolation)
        try s.owner.modify(saving: [inOther(item("root", in: s.owner)), inOther(share("s1", root: "root", participants: []))]).error.map { throw $0 }
        #expect(try s.owner.modify(saving: [inOther(share("s2", root: "root", participants: []))]).saveResults[0].1.error?.code == .alreadyShared)
        try s.owner.modify(saving: [inOther(item("child", parent: "root", in: s.owner))]).error.map { throw $0 }
        #expect(try s.owner.modify(saving: [inOther(share("s3", root: "child", participants: []))]).saveResults[0].1.error?.code == .alreadyShared)
        // A parent that does not exist is a reference violation.
        #expect(try s.owner.modify(saving: [inOther(item("orphan", parent: "nowhere", in: s.owner))]).saveResults[0].1.error?.code == .referenceViolation)
        // Deleting the share clears the root's share.
        try s.owner.delete(RecordID(recordName: "s1", zoneID: ZoneID(zoneName: "Other")))
        #expect(try s.owner.record(for: RecordID(recordName: "root", zoneID: ZoneID(zoneName: "Other"))).share == nil)
        // No share in the default zone.
        #expect(try s.owner.modify(saving: [share("s4", root: "x", participants: []).inZone(ZoneID())]).saveResults[0].1.error?.code == .invalidArguments)
    }

    /// A participant's saves count against the owner's private quota, never their own: the
    /// owner's usage grows by them, and a save past the owner's quota is `quotaExceeded`.
    @Test func aParticipantsSavesAreChargedToTheOwner() throws {
        let s = try Three()
        let zoneShare = share(ShareInfo.zoneWideRecordName, root: nil, participants: [
            .init(userRecordName: s.wesName, role: .privateUser, permission: .readWrite, acceptanceStatus: .accepted)])
        let made = try s.owner.modify(saving: [zoneShare]).saveResults[0].1.get()
        try s.c.acceptShare(url: made.shareInfo!.shortGUID, caller: s.writer)
        let wes = try s.shared(s.writer)
        let zone = ZoneID(zoneName: "Lists", ownerName: s.owner.userRecordName)
        func big(_ name: String) -> Record {
            var r = Record(recordType: "Item", recordID: RecordID(recordName: name, zoneID: zone))
            r["text"] = .string(String(repeating: "x", count: 20_000))
            return r
        }
        let before = try s.owner.usage()
        try wes.modify(saving: [big("a")]).error.map { throw $0 }
        #expect(try s.owner.usage() >= before + 20_000)
        #expect(try s.c.database(.private, caller: s.writer).usage() == 0)
        try s.c.setQuotas(privateBytes: try s.owner.usage() + 10_000, publicBytes: nil)
        #expect(try wes.modify(saving: [big("b")]).saveResults[0].1.error?.code == .quotaExceeded)
        #expect(try s.c.database(.private, caller: s.writer).modify(saving: [big("mine").inZone(ZoneID())]).error == nil,
                "his own database has its own quota")
    }
}
