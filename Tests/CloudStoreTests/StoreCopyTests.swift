import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs export` and `ckfs import` through the engine: a store copied out and back is the same
/// to the byte, fsck finds nothing, and what clients held before the move (zone change tokens,
/// record change tags, the key-value store, subscriptions, shares) is good after it.
@Suite struct StoreCopyTests {
    /// A store made by several paths: records and a custom zone with a share, an asset, a
    /// deleted record, a subscription, a key-value store, a production schema.
    struct Made {
        let t: TempStore
        let owner: Database
        let token: ChangeToken
        let listTag: String
        let notificationToken: NotificationToken

        init() throws {
            t = try TempStore()
            let c = try t.store.container()
            for name in ["olivia", "wes"] { try c.addUser(name, emails: ["\(name)@example.com"]) }
            owner = try c.database(.private, caller: Caller(userName: "olivia"))
            try owner.createZone("Lists")
            var list = Record(recordType: "Item", recordID: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
            list["text"] = .string("groceries")
            var gone = Record(recordType: "Item", recordID: RecordID(recordName: "gone", zoneID: ZoneID(zoneName: "Lists")))
            gone["text"] = .string("deleted before the move")
            try owner.modify(saving: [list, gone], options: ModifyOptions(clientChangeToken: Data("client-1".utf8))).error.map { throw $0 }
            try owner.delete(RecordID(recordName: "gone", zoneID: ZoneID(zoneName: "Lists")))
            var share = Record(recordType: ShareInfo.recordType, recordID: RecordID(recordName: "share-1", zoneID: ZoneID(zoneName: "Lists")))
            share.shareInfo = ShareInfo(publicPermission: .none, participants: [
                .init(userRecordName: try c.userRecordName(for: Caller(userName: "wes")), role: .privateUser, permission: .readWrite, acceptanceStatus: .pending),
            ], rootRecordName: "list")
            try owner.modify(saving: [share]).error.map { throw $0 }
            let file = t.path + "/picture.bin"
            try Data("picture bytes".utf8).write(to: URL(fileURLWithPath: file))
            try owner.save(record("pic", ["image": .asset(Asset(file: file)), "n": .int64(1)]))
            try owner.saveSubscription(Subscription(recordType: "Note", subscriptionID: "notes", options: [.firesOnRecordCreation]))
            try owner.save(record("fired", ["n": .int64(2)]))
            try owner.save(record("fired-too", ["n": .int64(3)]))
            let kv = try KeyValueStore(store: t.store, user: "olivia", synchronizeEvery: nil)
            try kv.setValue(.string("dark"), forKey: "theme")
            _ = try kv.sync()
            let publicDB = try c.database(.public, caller: Caller(userName: "wes"))
            try publicDB.save(record("hello", ["text": .string("public")]))
            try c.schema.deploy()
            let notifications = try c.notificationLog(user: "olivia")
            let all = try notifications.changes()
            try notifications.markRead([try #require(all.notifications.first).notificationID])
            notificationToken = all.token
            token = try owner.currentChangeToken(in: "Lists")
            listTag = try owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists"))).recordChangeTag ?? ""
            // Changes after the token, which a client holding it fetches after the move.
            var later = try owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
            later["text"] = .string("groceries, milk")
            try owner.save(later)
            t.store.waitForRecordFiles()
        }
    }

    /// The error `body` throws; nil when it throws none.
    static func error(_ body: () throws -> Void) -> CKError? {
        do { try body() } catch let e as CKError { return e } catch { return CKError(.internalError, "\(error)") }
        return nil
    }

    static func temporaryPath(_ what: String) -> String { NSTemporaryDirectory() + "ckfs-\(what)-" + UUID().uuidString }

    /// Every file under `root`, by its path below it, with its bytes.
    static func tree(_ root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        for case let relative as String in walker {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder)
            if !isFolder.boolValue { out[relative] = FileManager.default.contents(atPath: root + "/" + relative) }
        }
        return out
    }

    @Test func exportImportExportGivesTheSameBytesAndACleanStore() throws {
        let m = try Made()
        let first = Self.temporaryPath("export"), moved = Self.temporaryPath("moved"), second = Self.temporaryPath("export")
        defer { for p in [first, moved, second] { try? FileManager.default.removeItem(atPath: p) } }
        let copied = try m.t.store.export(to: first)
        // list, share-1, pic, fired, fired-too (private) and hello (public).
        #expect(copied.containers == 1 && copied.records == 6 && copied.assets == 1, "\(copied)")
        try Store.create(at: moved, importing: first)
        try Store.open(at: moved).export(to: second)
        let a = try Self.tree(first), b = try Self.tree(second)
        #expect(!a.isEmpty)
        #expect(a.keys.sorted() == b.keys.sorted())
        for (path, bytes) in a where b[path] != bytes { Issue.record("\(path) differs between the two exports") }
        // The export is a store that fsck finds clean, and so is the store imported from it.
        for path in [first, moved] {
            let report = try Store.open(at: path).check()
            #expect(report.damage.isEmpty && report.repaired.isEmpty, "\(path): \(report.damage) \(report.repaired)")
        }
        // An outside reader reads a record of the export with JSON alone.
        let recordFile = try #require(a.keys.first { $0.hasSuffix("/records/list.json") })
        let json = try JSONParser.parse(Array(try #require(a[recordFile])))
        #expect(json["fields"]?["text"]?["value"]?.stringValue == "groceries, milk", "\(json)")
    }

    @Test func tokensTagsAndWhatClientsKeptAreGoodAfterTheMove() throws {
        let m = try Made()
        let export = Self.temporaryPath("export"), moved = Self.temporaryPath("moved")
        defer { for p in [export, moved] { try? FileManager.default.removeItem(atPath: p) } }
        try m.t.store.export(to: export)
        try Store.create(at: moved, importing: export)
        let store = try Store.open(at: moved)
        let c = try store.container()
        let owner = try c.database(.private, caller: Caller(userName: "olivia"))
        // The change token held before the move gives exactly what changed since.
        let changes = try owner.changes(in: "Lists", since: m.token)
        #expect(changes.changed.map(\.recordID.recordName) == ["list"])
        #expect(changes.changed.first?["text"] == .string("groceries, milk"))
        #expect(changes.deleted.isEmpty)
        #expect(try owner.currentChangeToken(in: "Lists") == (try m.owner.currentChangeToken(in: "Lists")))
        #expect(try owner.changes(in: "Lists", since: nil).clientChangeToken == Data("client-1".utf8))
        // A save with the change tag from before the later edit is still a conflict.
        var stale = try m.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
        stale.recordChangeTag = m.listTag
        stale["text"] = .string("stale")
        #expect(Self.error { try owner.save(stale) }?.code == .serverRecordChanged)
        // The asset's bytes, the share, the subscription, the key-value store, the schema.
        let pic = try owner.record(for: RecordID(recordName: "pic"))
        guard case .asset(let asset)? = pic["image"] else { Issue.record("no asset"); return }
        #expect(FileManager.default.contents(atPath: try owner.assetFile(asset)) == Data("picture bytes".utf8))
        #expect(try c.shares().count == 1)
        #expect(try owner.subscriptions().map(\.subscriptionID) == ["notes"])
        // The notifications, read marks and all; the token held before goes on.
        let notifications = try c.notificationLog(user: "olivia")
        let kept = try notifications.changes()
        #expect(kept.notifications.count == 2 && kept.notifications.filter(\.isRead).count == 1 && kept.badge == 0,
                "two notifications, one read; the subscription asked for no badge")
        #expect(try notifications.changes(since: m.notificationToken).notifications.isEmpty)
                let kv = try KeyValueStore(store: store, user: "olivia", synchronizeEvery: nil)
        #expect(kv.value(forKey: "theme") == .string("dark"))
        #expect(try c.schema.fields(of: "Item", environment: .production, including: []) != nil)
        #expect(try c.database(.public, caller: Caller(userName: "wes")).record(for: RecordID(recordName: "hello"))["text"] == .string("public"))
        // Saves go on from where the zone was.
        var next = try owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
        next["text"] = .string("after the move")
        let saved = try owner.save(next)
        #expect(Int64(saved.recordChangeTag ?? "") == m.token.seq + 2)
    }

    /// An export that stops part way (here at a damaged record file of the source) leaves a
    /// folder that no one takes for a whole store: opening it or importing it says so, and
    /// what to do.
    @Test func aCopyThatStopsPartWayIsNeverTakenForAWholeStore() throws {
        let m = try Made()
        let export = Self.temporaryPath("export")
        defer { try? FileManager.default.removeItem(atPath: export) }
        let file = StoreLayout.recordFile(m.owner.zoneDirectory("Lists"), name: "list")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: file))
        let stopped = Self.error { try m.t.reopen().export(to: export) }
        #expect(stopped?.message.contains("is not valid JSON") == true, "\(String(describing: stopped))")
        #expect(FileManager.default.fileExists(atPath: export + "/ckfs-store.json"), "the export had begun")
        for refused in [Self.error { _ = try Store.open(at: export) }, Self.error { try Store.create(at: Self.temporaryPath("moved"), importing: export) }] {
            #expect(refused?.code == .badDatabase && refused?.message.contains("did not finish") == true, "\(String(describing: refused))")
        }
    }

    /// A hand-edited export is refused with the file and what is wrong: a record file that is
    /// not JSON, an asset a record names that is gone, a history with entries cut out of it, a
    /// record copied under a second file name.
    @Test(arguments: ["record", "asset", "gap", "line", "duplicate"])
    func aDamagedExportIsRefusedNamingWhatIsWrong(damage: String) throws {
        let m = try Made()
        let export = Self.temporaryPath("export"), moved = Self.temporaryPath("moved")
        defer { for p in [export, moved] { try? FileManager.default.removeItem(atPath: p) } }
        for i in 0..<3 {
            var r = try m.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))
            r["text"] = .string("edit \(i)")
            try m.owner.save(r)
        }
        m.t.store.waitForRecordFiles()
        try m.t.store.export(to: export)
        let lists = try #require(try Self.tree(export).keys.first { $0.hasSuffix("/zones/Lists/zone.json") }.map { export + "/" + $0.dropLast("zone.json".count) })
        let expected: String
        switch damage {
        case "record":
            try Data("{ not json".utf8).write(to: URL(fileURLWithPath: lists + "records/list.json"))
            expected = "records/list.json is not valid JSON"
        case "asset":
            let picZone = try #require(try Self.tree(export).keys.first { $0.contains("/zones/_defaultZone/assets/") && $0.contains("/private/") })
            try FileManager.default.removeItem(atPath: export + "/" + picZone)
            expected = "names asset"
        case "duplicate":
            try FileManager.default.copyItem(atPath: lists + "records/list.json", toPath: lists + "records/list-copy.json")
            expected = "gives record list twice"
        default:
            let log = try #require(FileManager.default.contents(atPath: lists + "log.jsonl"))
            var lines = log.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            try #require(lines.count > 4)
            if damage == "gap" {
                lines.remove(at: 2)
                expected = "has a gap"
            } else {
                // A line in the middle that is no entry: the log is damaged there.
                lines[2] = Data(#"{"not": "an entry"}"#.utf8)
                expected = "log.jsonl is damaged at byte"
            }
            try Data(lines.joined(separator: [UInt8(ascii: "\n")])).write(to: URL(fileURLWithPath: lists + "log.jsonl"))
        }
        let refused = Self.error { try Store.create(at: moved, importing: export) }
        #expect(refused?.message.contains(expected) == true, "\(String(describing: refused))")
        #expect(refused?.message.hasPrefix("copying zone \(damage == "asset" ? ZoneID.defaultZoneName : "Lists") of the private database of _") == true,
                "it names the zone and its database: \(String(describing: refused))")
        // What was made of the target before the refusal is never taken for a whole store.
        #expect(Self.error { _ = try Store.open(at: moved) }?.message.contains("did not finish") == true)
    }

    /// `--user` takes one user's private data without the public database; `--zone` one zone
    /// of each database, with the subscriptions of that zone and nothing else of a user's.
    @Test func usersAndZonesNarrowAnExport() throws {
        let m = try Made()
        let wes = try m.t.store.container().database(.private, caller: Caller(userName: "wes"))
        try wes.save(record("mine", ["text": .string("wes's")]))
        try m.owner.saveSubscription(Subscription(recordType: "Item", subscriptionID: "lists", options: [.firesOnRecordCreation], zoneName: "Lists"))
        m.t.store.waitForRecordFiles()
        let byUser = Self.temporaryPath("user"), byZone = Self.temporaryPath("zone")
        defer { for p in [byUser, byZone] { try? FileManager.default.removeItem(atPath: p) } }

        try m.t.store.export(to: byUser, users: ["wes"])
        let users = try Store.open(at: byUser).container()
        #expect(try users.database(.private, caller: Caller(userName: "wes")).record(for: RecordID(recordName: "mine"))["text"] == .string("wes's"))
        #expect(try users.database(.private, caller: Caller(userName: "olivia")).zones().map(\.zoneID.zoneName) == [ZoneID.defaultZoneName],
                "olivia's zones are not exported (her default zone is made when her database is opened)")
        #expect(Self.error { _ = try users.database(.public, caller: Caller(userName: "wes")).record(for: RecordID(recordName: "hello")) }?.code == .unknownItem)

        try m.t.store.export(to: byZone, zones: ["Lists"])
        let zoned = try Store.open(at: byZone).container()
        let owner = try zoned.database(.private, caller: Caller(userName: "olivia"))
        #expect(try owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))["text"] == .string("groceries, milk"))
        #expect(Self.error { _ = try owner.record(for: RecordID(recordName: "pic")) }?.code == .unknownItem)
        #expect(try owner.subscriptions().map(\.subscriptionID) == ["lists"])
        #expect(try KeyValueStore(store: Store.open(at: byZone), user: "olivia", synchronizeEvery: nil).value(forKey: "theme") == nil,
                "a user's key-value store is no zone's")

        let unknown = Self.error { try m.t.store.export(to: Self.temporaryPath("nobody"), users: ["nobody"]) }
        #expect(unknown?.message.contains("has no user nobody") == true, "\(String(describing: unknown))")
    }

    /// A container imported into a store that exists: added whole, or, when the import
    /// stops part way, refused when opened until a rerun makes it anew.
    @Test func anImportIntoAStoreThatExistsAddsTheContainerOrNothingThatLooksWhole() throws {
        let source = try TempStore()
        let other = try source.store.container("iCloud.example.other")
        let db = try other.database(.private, caller: Caller(userName: "olivia"))
        try db.save(record("x", ["n": .int64(7)]))
        source.store.waitForRecordFiles()
        let damaged = Self.temporaryPath("export"), good = Self.temporaryPath("export")
        defer { for p in [damaged, good] { try? FileManager.default.removeItem(atPath: p) } }
        try source.store.export(to: damaged, containers: ["iCloud.example.other"])
        try source.store.export(to: good, containers: ["iCloud.example.other"])
        let file = try #require(try Self.tree(damaged).keys.first { $0.hasSuffix("/records/x.json") })
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: damaged + "/" + file))

        let target = try TempStore()
        try target.db().save(record("mine"))
        let stopped = Self.error { try target.store.importContents(from: damaged) }
        #expect(stopped?.message.contains("is not valid JSON") == true, "\(String(describing: stopped))")
        let refused = Self.error { _ = try Store.open(at: target.path).container("iCloud.example.other") }
        #expect(refused?.code == .badContainer && refused?.message.contains("stopped part way") == true, "\(String(describing: refused))")
        #expect(target.store.check().damage.contains { $0.contains("an import of container iCloud.example.other stopped part way") })
        try target.store.importContents(from: good)
        let moved = try Store.open(at: target.path)
        #expect(try moved.container("iCloud.example.other").database(.private, caller: Caller(userName: "olivia")).record(for: RecordID(recordName: "x"))["n"] == .int64(7))
        #expect(try moved.container().database(.private, caller: Caller(userName: "alice")).record(for: RecordID(recordName: "mine")).recordType == "Note",
                "what the store held is kept")
    }

    /// An import told to skip the containers the store holds leaves them exactly as they
    /// were (bytes, records, tokens) and adds the others whole; without it, nothing changes.
    @Test func anImportThatSkipsHeldContainersAddsOnlyTheOthers() throws {
        let source = try TempStore()
        try source.db().save(record("theirs", ["n": .int64(1)]))
        let other = try source.store.container("iCloud.example.other").database(.private, caller: Caller(userName: "olivia"))
        try other.save(record("x", ["n": .int64(7)]))
        source.store.waitForRecordFiles()
        let export = Self.temporaryPath("export")
        defer { try? FileManager.default.removeItem(atPath: export) }
        try source.store.export(to: export)

        let target = try TempStore()
        let mine = try target.db()
        try mine.save(record("mine", ["n": .int64(2)]))
        let token = try mine.currentChangeToken()
        target.store.waitForRecordFiles()
        let defaultFolder = target.path + "/" + target.store.settings.defaultContainer
        let before = try Self.tree(defaultFolder)
        #expect(Self.error { try target.store.importContents(from: export) }?.message.contains("--skip-held") == true)
        let done = try target.store.importContents(from: export, skippingHeld: true)
        #expect(done.skipped == [target.store.settings.defaultContainer] && done.containers == 1, "\(done)")
        let after = try Self.tree(defaultFolder)
        #expect(after.keys.sorted() == before.keys.sorted())
        for (path, bytes) in before where after[path] != bytes { Issue.record("\(path) of the held container changed") }
        let reopened = try Store.open(at: target.path)
        let held = try reopened.container().database(.private, caller: Caller(userName: "alice"))
        #expect(try held.record(for: RecordID(recordName: "mine"))["n"] == .int64(2))
        #expect(Self.error { _ = try held.record(for: RecordID(recordName: "theirs")) }?.code == .unknownItem)
        #expect(try held.changes(since: token).changed.isEmpty)
        #expect(try reopened.container("iCloud.example.other").database(.private, caller: Caller(userName: "olivia"))
            .record(for: RecordID(recordName: "x"))["n"] == .int64(7))
        #expect(reopened.check().damage.isEmpty)
    }

    /// Zones of every shape go out and back to the same bytes, with what their tokens say: a
    /// log compacted past its first entries (an old token expired on both sides, a newer one
    /// good), a zone made and never written, a record name too long for a file name, an asset
    /// two records share.
    @Test func compactedLogsEmptyZonesLongNamesAndSharedAssetsGoOutAndBack() throws {
        let t = try TempStore(tuning: ZoneTuning.with { $0.checkpointEvery = 4; $0.compactLogBytes = 4_000 })
        let db = try t.db()
        let early = try db.currentChangeToken()
        for i in 0..<60 { try db.save(record("r\(i % 7)", ["n": .int64(Int64(i)), "pad": .string(String(repeating: "x", count: 100))]), policy: .allKeys) }
        let recent = try db.currentChangeToken()
        try db.save(record("after", ["n": .int64(1)]))
        try db.createZone("Empty")
        let long = String(repeating: "n", count: 250)
        try db.save(record(long, ["n": .int64(2)]))
        let file = t.path + "/shared.bin"
        try Data("shared bytes".utf8).write(to: URL(fileURLWithPath: file))
        try db.modify(saving: [record("a1", ["f": .asset(Asset(file: file))]), record("a2", ["f": .asset(Asset(file: file))])]).error.map { throw $0 }
        t.store.waitForRecordFiles()
        #expect(Self.error { _ = try db.changes(since: early) }?.code == .changeTokenExpired, "the log was compacted")

        let first = Self.temporaryPath("export"), moved = Self.temporaryPath("moved"), second = Self.temporaryPath("export")
        defer { for p in [first, moved, second] { try? FileManager.default.removeItem(atPath: p) } }
        try t.store.export(to: first)
        try Store.create(at: moved, importing: first)
        try Store.open(at: moved).export(to: second)
        let a = try Self.tree(first), b = try Self.tree(second)
        #expect(a.keys.sorted() == b.keys.sorted())
        for (path, bytes) in a where b[path] != bytes { Issue.record("\(path) differs between the two exports") }
        let after = try Store.open(at: moved).container().database(.private, caller: Caller(userName: "alice"))
        #expect(Self.error { _ = try after.changes(since: early) }?.code == .changeTokenExpired)
        #expect(try after.changes(since: recent).changed.map(\.recordID.recordName).sorted() == ["a1", "a2", "after", long].sorted())
        #expect(try after.zones().map(\.zoneID.zoneName).contains("Empty"))
        #expect(try after.record(for: RecordID(recordName: long))["n"] == .int64(2))
        guard case .asset(let shared)? = try after.record(for: RecordID(recordName: "a2"))["f"] else { Issue.record("no asset"); return }
        #expect(FileManager.default.contents(atPath: try after.assetFile(shared)) == Data("shared bytes".utf8))
        #expect(try Store.open(at: moved).check().damage.isEmpty)
    }

    /// fsck leaves a zone folder being built (as an import builds one, for as long as its
    /// zone takes) and removes one a crash left, an hour old.
    @Test func fsckLeavesAZoneBeingBuiltAndRemovesOneLeftBehind() throws {
        let t = try TempStore()
        _ = try t.db()
        let zones = t.path + "/" + (try #require(try Self.tree(t.path).keys.first { $0.hasSuffix("/zones/_defaultZone/zone.json") }))
            .dropLast("/_defaultZone/zone.json".count)
        let building = zones + "/.creating-Lists-abc", left = zones + "/.creating-Old-def"
        for folder in [building, left] {
            for sub in ["", "/records", "/assets"] { try FileManager.default.createDirectory(atPath: folder + sub, withIntermediateDirectories: true) }
        }
        let old = Date(timeIntervalSinceNow: -7_200)
        for sub in ["/records", "/assets", ""] { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: left + sub) }
        let report = t.store.check()
        #expect(FileManager.default.fileExists(atPath: building), "a zone being built is left")
        #expect(report.warnings.contains { $0.contains(".creating-Lists-abc is a zone being made") }, "\(report.warnings)")
        #expect(!FileManager.default.fileExists(atPath: left), "one left by a crash is removed")
        #expect(report.repaired.contains { $0.contains(".creating-Old-def") }, "\(report.repaired)")
    }

    /// Beside the containers, fsck leaves a container's folder an import is making and
    /// removes one a crash left an hour ago, and an unfinished container set aside.
    @Test func fsckRemovesContainerFoldersAnImportLeft() throws {
        let t = try TempStore()
        _ = try t.db()
        let making = t.path + "/.creating-iCloud.com.example.new-abc", left = t.path + "/.creating-iCloud.com.example.old-def"
        let aside = t.path + "/.discarded-iCloud.com.example.gone-ghi"
        for folder in [making, left, aside] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("an import of this container has not finished\n".utf8).write(to: URL(fileURLWithPath: folder + "/copy-unfinished"))
        }
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7_200)], ofItemAtPath: left)
        let report = t.store.check()
        #expect(FileManager.default.fileExists(atPath: making), "a container's folder being made is left")
        #expect(!FileManager.default.fileExists(atPath: left) && !FileManager.default.fileExists(atPath: aside))
        #expect(report.repaired.filter { $0.contains("left by an import that stopped part way") }.count == 2, "\(report.repaired)")
        #expect(report.damage.isEmpty, "\(report.damage)")
        #expect(try t.store.containerIdentifiers() == [t.store.settings.defaultContainer])
    }

    @Test func aStoreThatHoldsTheContainerIsRefusedAndKeepsWhatItHas() throws {
        let m = try Made()
        let export = Self.temporaryPath("export")
        defer { try? FileManager.default.removeItem(atPath: export) }
        try m.t.store.export(to: export)
        // Into the same store: it holds the container already.
        let refused = Self.error { try m.t.store.importContents(from: export) }
        #expect(refused?.code == .invalidArguments && refused?.message.contains("holds container") == true)
        // An export into a folder that holds something.
        #expect(Self.error { try m.t.store.export(to: export) }?.message.contains("not empty") == true)
        #expect(try m.owner.record(for: RecordID(recordName: "list", zoneID: ZoneID(zoneName: "Lists")))["text"] == .string("groceries, milk"))
    }
    /// A zone read in many pieces (its records a few at a time on two threads, its log a
    /// thousand bytes at a time: pieces that end within a line, and lines longer than a piece)
    /// goes out and back to the same bytes, and what a token held before says the same after.
    /// The export reads with small pieces; the import reads 1,200 records with the default
    /// ones (three pieces).
    @Test func aZoneReadInManyPiecesGoesOutAndBackInOrder() throws {
        let t = try TempStore(tuning: ZoneTuning.with { $0.copyRecordsPerPiece = 7; $0.copyLogBytesPerPiece = 1_000 })
        let db = try t.db()
        for batch in 0..<3 {
            try db.modify(saving: (0..<400).map { i in record("r\(batch * 400 + i)", ["n": .int64(Int64(i)), "pad": .string(String(repeating: "p", count: i % 50))]) }).error.map { throw $0 }
        }
        let token = try db.currentChangeToken()
        for i in 0..<60 { try db.save(record("r\(i * 17)", ["n": .int64(-1)]), policy: .allKeys) }
        try db.delete(RecordID(recordName: "r5"))
        // A zone of small entries only, so that most pieces end within a line.
        try db.createZone("Notes")
        for i in 0..<80 { try db.save(record("n\(i)", zone: "Notes", ["pad": .string(String(repeating: "q", count: (i * 37) % 400))])) }
        t.store.waitForRecordFiles()

        let first = Self.temporaryPath("export"), moved = Self.temporaryPath("moved"), second = Self.temporaryPath("export")
        defer { for p in [first, moved, second] { try? FileManager.default.removeItem(atPath: p) } }
        // From a store object that has read no record, so the helpers parse every file.
        let copied = try Store.open(at: t.path, tuning: t.store.tuning).export(to: first)
        #expect(copied.records == 1_199 + 80, "\(copied)")
        try Store.create(at: moved, importing: first)
        try Store.open(at: moved).export(to: second)
        let a = try Self.tree(first), b = try Self.tree(second)
        #expect(a.keys.filter { $0.contains("/records/") }.count == 1_199 + 80)
        #expect(a.keys.sorted() == b.keys.sorted())
        for (path, bytes) in a where b[path] != bytes { Issue.record("\(path) differs between the two exports") }
        let after = try Store.open(at: moved).container().database(.private, caller: Caller(userName: "alice"))
        let changes = try after.changes(since: token)
        #expect(changes.changed.map(\.recordID.recordName).sorted() == (0..<60).map { "r\($0 * 17)" }.sorted())
        #expect(changes.deleted.map(\.recordName) == ["r5"])
        #expect(try after.record(for: RecordID(recordName: "r1199"))["n"] == .int64(399))
        #expect(try after.recordCount(in: "Notes") == 80)
        #expect(try Store.open(at: moved).check().damage.isEmpty)
    }

    /// A damaged record file in a later piece of a large zone stops the import with its file
    /// named, after the pieces before it were read, and leaves no helper reading.
    @Test func aDamagedRecordInALaterPieceIsNamed() throws {
        let t = try TempStore()
        let db = try t.db()
        for batch in 0..<3 {
            try db.modify(saving: (0..<400).map { i in record(String(format: "r%04d", batch * 400 + i), ["n": .int64(Int64(i))]) }).error.map { throw $0 }
        }
        t.store.waitForRecordFiles()
        let export = Self.temporaryPath("export"), moved = Self.temporaryPath("moved")
        defer { for p in [export, moved] { try? FileManager.default.removeItem(atPath: p) } }
        try t.store.export(to: export)
        let damaged = try #require(try Self.tree(export).keys.first { $0.hasSuffix("/records/r1100.json") })
        try Data("{ \"recordName\": ".utf8).write(to: URL(fileURLWithPath: export + "/" + damaged))
        var copied = 0
        let refused = Self.error {
            try Store.create(at: moved, importing: export, progress: { copied = $0.records })
        }
        #expect(refused?.message.contains("records/r1100.json is not valid JSON") == true, "\(String(describing: refused))")
        #expect(copied == 1_000, "the records before the damaged one were copied (progress is told every 1,000): \(copied)")
        #expect(Self.error { _ = try Store.open(at: moved) }?.message.contains("did not finish") == true)
    }
}
