import CloudKit
import CloudStore
import Testing
import TestSupport

/// Habits of real CloudKit app code that ckfs must meet unchanged: numbers read back as
/// `NSNumber`s do, databases compared with `==`, the owner's shared database listed beside
/// the private one, and the names such code uses (`Self(identifier:)`, the Objective-C
/// typealiases, `UserDefaults.value(forKey:)`).
@Suite struct AppCodeHabitsTests {
    /// A Codable-style coder stores a Bool and reads it `as? Int64`, and code reads a count
    /// `as? Int64` or `as? Double`: before the save, on the saved record and after a fetch.
    @Test func numbersReadAsNSNumbersDo() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let record = CKRecord(recordType: "Settings", recordID: CKRecord.ID(recordName: "numbers-\(UUID().uuidString)"))
        record["flag"] = true
        record["off"] = false
        record["count"] = 5
        record["ratio"] = 2.5
        record["list"] = [1, 2]
        record["bits"] = [true, false]
        func check(_ r: CKRecord, _ when: String) {
            #expect(r["flag"] as? Bool == true && r["flag"] as? Int64 == 1 && r["flag"] as? Int == 1, "\(when): flag")
            #expect(r["off"] as? Bool == false && r["off"] as? Int64 == 0, "\(when): off")
            #expect(r["count"] as? Int64 == 5 && r["count"] as? Double == 5 && r["count"] as? Int == 5 && r["count"] as? Bool == nil, "\(when): count")
            #expect(r["ratio"] as? Double == 2.5 && r["ratio"] as? Float == 2.5 && r["ratio"] as? Int == nil, "\(when): ratio")
            #expect(r["list"] as? [Int64] == [1, 2] && r["list"] as? [Int] == [1, 2] && r["list"] as? [Double] == [1, 2], "\(when): list")
            #expect(r["bits"] as? [Bool] == [true, false], "\(when): bits")
            #expect((r["count"] as? NSNumber)?.int64Value == 5 && r.object(forKey: "flag") as? Int64 == 1, "\(when): NSNumber")
            let flag: Bool? = r["flag"]
            let count: Int64? = r["count"]
            #expect(flag == true && count == 5, "\(when): the generic subscript")
        }
        check(record, "before the save")
        let saved = try await db.save(record)
        check(saved, "the saved record")
        check(try await db.record(for: record.recordID), "a fetch")
    }

    /// Each access of a database makes an object; code asks which one it holds with `==`.
    @Test func databasesAndContainersCompareByWhatTheyAre() throws {
        let path = TemporaryStores.path("ckfs-equal-")
        let container = try CKContainer(store: Store.create(at: path), user: "mei")
        let again = try CKContainer(store: Store.open(at: path), user: "mei")
        #expect(again == container && again.privateCloudDatabase == container.privateCloudDatabase)
        #expect(container.privateCloudDatabase == container.privateCloudDatabase)
        #expect(container.sharedCloudDatabase == container.sharedCloudDatabase)
        #expect(container.publicCloudDatabase == container.database(with: .public))
        #expect(container.privateCloudDatabase != container.sharedCloudDatabase)
        let all: Set<CKDatabase> = [container.privateCloudDatabase, container.sharedCloudDatabase, container.publicCloudDatabase,
                                    container.privateCloudDatabase]
        #expect(all.count == 3)
        let db: CKDatabase = container.sharedCloudDatabase
        let which = db == container.sharedCloudDatabase ? "shared" : db == container.privateCloudDatabase ? "private" : "public"
        #expect(which == "shared")
        // Another user's private database is another database.
        let other = try CKContainer(store: Store.open(at: path), user: "someone-else")
        #expect(other.privateCloudDatabase != container.privateCloudDatabase && other != container)
    }

    /// Apple's sharing samples list the private and shared zones together: the owner's own
    /// shared database holds none of the zones they share (those are in the private one).
    @Test func theOwnersSharedDatabaseListsWhatOthersShareOnly() async throws {
        let (olivia, wes, _, _) = try await Self.listSharedWithWes(CKRecord(recordType: "List", recordID: CKRecord.ID(recordName: "groceries")))
        #expect(try await olivia.sharedCloudDatabase.allRecordZones().isEmpty)
        let everyZone = try await olivia.privateCloudDatabase.allRecordZones() + olivia.sharedCloudDatabase.allRecordZones()
        #expect(everyZone.map(\.zoneID.zoneName).sorted() == ["Lists", "_defaultZone"])
        let changes = try await olivia.sharedCloudDatabase.databaseChanges(since: nil)
        #expect(changes.modifications.isEmpty && changes.deletions.isEmpty)
        let all = CKFetchRecordZonesOperation.fetchAllRecordZonesOperation()
        let found = Locked<Result<Void, Error>?>(nil)
        all.fetchRecordZonesResultBlock = { r in found.withLock { $0 = r } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            all.completionBlock = { done.resume() }
            olivia.sharedCloudDatabase.add(all)
        }
        #expect(throws: Never.self) { try found.withLock { $0 }?.get() }
        // The participant's shared database lists the owner's zone.
        #expect(try await wes.sharedCloudDatabase.allRecordZones().map(\.zoneID.zoneName) == ["Lists"])
    }

    /// Places as CoreLocation's `CLLocation`, which Apple's CloudKit brings: a record value that
    /// reads back as one, a predicate argument and a distance sort's point.
    @Test func placesAreCLLocations() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let paris = CLLocation(latitude: 48.8566, longitude: 2.3522)
        for (name, lat, lon) in [("louvre", 48.8606, 2.3376), ("lyon", 45.764, 4.8357), ("oslo", 59.9139, 10.7522)] {
            let place = CKRecord(recordType: "Place", recordID: CKRecord.ID(recordName: name))
            place["at"] = CLLocation(coordinate: CLLocationCoordinate2D(latitude: lat, longitude: lon), altitude: 35,
                                     horizontalAccuracy: 5, verticalAccuracy: 3, timestamp: Date(timeIntervalSince1970: 1_700_000_000))
            _ = try await db.save(place)
        }
        let louvre = try await db.record(for: CKRecord.ID(recordName: "louvre"))
        let at = try #require(louvre["at"] as? CLLocation)
        #expect(at.coordinate.latitude == 48.8606 && at.altitude == 35 && at.horizontalAccuracy == 5)
        #expect(at.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(abs(at.distance(from: paris) - 1_142) < 20, "\(at.distance(from: paris))")
        let near = CKQuery(recordType: "Place", predicate: NSPredicate(format: "distanceToLocation:fromLocation:(at, %@) < 500000", paris))
        near.sortDescriptors = [CKLocationSortDescriptor(key: "at", relativeLocation: paris)]
        let (matches, _) = try await db.records(matching: near)
        #expect(matches.map(\.0.recordName) == ["louvre", "lyon"])
    }

    /// Apps move a record to another zone by saving a copy there: its fetched `CKAsset` goes
    /// with it. An asset named by a checksum its zone does not hold is refused, never saved as
    /// a record naming a missing file.
    @Test func aFetchedAssetMovesToAnotherZone() async throws {
        let path = TemporaryStores.path("ckfs-asset-move-")
        let container = try CKContainer(store: Store.create(at: path), user: "mei")
        let db = container.privateCloudDatabase
        let file = URL(fileURLWithPath: path + "-photo.bin")
        try Data("photo bytes".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let photo = CKRecord(recordType: "Photo", recordID: CKRecord.ID(recordName: "sea"))
        photo["image"] = CKAsset(fileURL: file)
        _ = try await db.save(photo)
        let fetched = try await db.record(for: photo.recordID)
        let album = CKRecordZone(zoneName: "Album")
        _ = try await db.save(album)
        let moved = CKRecord(recordType: "Photo", recordID: CKRecord.ID(recordName: "sea", zoneID: album.zoneID))
        moved["image"] = fetched["image"]
        let saved = try await db.save(moved)
        let url = try #require((saved["image"] as? CKAsset)?.fileURL)
        #expect(FileManager.default.contents(atPath: url.path) == Data("photo bytes".utf8))
        #expect(try Store.open(at: path).check().damage.isEmpty)
    }

    /// The conflict merge of sync code, in the shared database: the error's `serverRecord` is in
    /// the owner's zone, as the participant fetched it, with its asset's file there to read, so
    /// the merged record saves back where it belongs.
    @Test func aConflictInTheSharedDatabaseMergesIntoTheServerRecord() async throws {
        let file = URL(fileURLWithPath: TemporaryStores.path("ckfs-note-") + ".bin")
        try Data("attached".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let root = CKRecord(recordType: "List", recordID: CKRecord.ID(recordName: "groceries"))
        root["title"] = "Groceries"
        root["attachment"] = CKAsset(fileURL: file)
        let (olivia, wes, list, sharedZone) = try await Self.listSharedWithWes(root, zoneWide: true)
        let id = CKRecord.ID(recordName: "groceries", zoneID: sharedZone)
        let mine = try await wes.sharedCloudDatabase.record(for: id)
        // The owner changes it meanwhile.
        let theirs = try await olivia.privateCloudDatabase.record(for: list)
        theirs["title"] = "Groceries for Sunday"
        _ = try await olivia.privateCloudDatabase.save(theirs)
        mine["done"] = 1
        var merged: CKRecord?
        do { _ = try await wes.sharedCloudDatabase.save(mine) } catch let error as CKError where error.code == .serverRecordChanged {
            merged = error.serverRecord
        }
        let server = try #require(merged)
        #expect(server.recordID.zoneID == sharedZone, "\(server.recordID.zoneID)")
        let asset = try #require(server["attachment"] as? CKAsset)
        #expect(FileManager.default.contents(atPath: try #require(asset.fileURL).path) == Data("attached".utf8))
        server["done"] = 1
        let again = try await wes.sharedCloudDatabase.save(server)
        #expect(again["title"] as? String == "Groceries for Sunday" && again["done"] as? Int == 1)
        let owners = try await olivia.privateCloudDatabase.record(for: list)
        #expect(owners["done"] as? Int == 1)
    }

    /// olivia saves `root` (its fields) in her zone Lists and shares it, or the whole zone, with
    /// wes, who accepts: both containers, the record's ID in her zone, the zone as wes sees it.
    static func listSharedWithWes(_ root: CKRecord, zoneWide: Bool = false) async throws
        -> (olivia: CKContainer, wes: CKContainer, list: CKRecord.ID, sharedZone: CKRecordZone.ID) {
        let path = TemporaryStores.path("ckfs-shared-")
        let store = try Store.create(at: path)
        for name in ["olivia", "wes"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
        let olivia = try CKContainer(store: store, user: "olivia")
        let wes = try CKContainer(store: Store.open(at: path), user: "wes")
        let zone = CKRecordZone(zoneName: "Lists")
        _ = try await olivia.privateCloudDatabase.save(zone)
        let list = CKRecord(recordType: root.recordType, recordID: CKRecord.ID(recordName: root.recordID.recordName, zoneID: zone.zoneID))
        for (key, value) in root { list[key] = value }
        let share = zoneWide ? CKShare(recordZoneID: zone.zoneID) : CKShare(rootRecord: list)
        let participant = try await olivia.shareParticipant(forEmailAddress: "wes@example.com")
        participant.permission = .readWrite
        share.addParticipant(participant)
        let (saved, _) = try await olivia.privateCloudDatabase.modifyRecords(saving: [list, share], deleting: [])
        let url = try #require((try saved[share.recordID]?.get() as? CKShare)?.url)
        _ = try await wes.accept(try await wes.shareMetadata(for: url))
        let sharedZone = try #require(try await wes.sharedCloudDatabase.allRecordZones().first?.zoneID)
        return (olivia, wes, list.recordID, sharedZone)
    }

    /// iOS 8 sync code: `CKFetchRecordChangesOperation` from a kept token, a page at a time.
    @Test func theOlderRecordChangesOperationSyncsAZone() async throws {
        let container = try ImportCloudKitTests.container()
        let db = container.privateCloudDatabase
        let zone = CKRecordZone(zoneName: "Old")
        _ = try await db.save(zone)
        for name in ["a", "b", "c"] { _ = try await db.save(CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: name, zoneID: zone.zoneID))) }
        func fetch(since token: CKServerChangeToken?, limit: Int = 0) -> (changed: [String], deleted: [String], token: CKServerChangeToken?, more: Bool) {
            let op = CKFetchRecordChangesOperation(recordZoneID: zone.zoneID, previousServerChangeToken: token)
            op.resultsLimit = limit
            let changed = Locked<[String]>([]), deleted = Locked<[String]>([]), next = Locked<CKServerChangeToken?>(nil)
            op.recordChangedBlock = { record in changed.withLock { $0.append(record.recordID.recordName) } }
            op.recordWithIDWasDeletedBlock = { id in deleted.withLock { $0.append(id.recordName) } }
            op.fetchRecordChangesCompletionBlock = { token, _, error in next.withLock { $0 = error == nil ? token : nil } }
            op.database = db
            OperationQueue().addOperations([op], waitUntilFinished: true)
            return (changed.withLock { $0 }.sorted(), deleted.withLock { $0 }, next.withLock { $0 }, op.moreComing)
        }
        let first = fetch(since: nil, limit: 2)
        #expect(first.changed.count == 2 && first.more && first.token != nil)
        let rest = fetch(since: first.token)
        #expect((first.changed + rest.changed).sorted() == ["a", "b", "c"] && !rest.more)
        _ = try await db.deleteRecord(withID: CKRecord.ID(recordName: "b", zoneID: zone.zoneID))
        let after = fetch(since: rest.token)
        #expect(after.changed.isEmpty && after.deleted == ["b"])
    }

    /// Names app code uses that Apple's module declares.
    @Test func namesAppsUse() throws {
        let app: CKContainer = AppContainer.app()
        #expect(app.containerIdentifier == "iCloud.example.app")
        let permissions: CKContainer_Application_Permissions = .userDiscoverability
        let status: CKContainer_Application_PermissionStatus = .granted
        let block: CKContainer_Application_PermissionBlock = { _, _ in }
        block(status, nil)
        #expect(permissions == CKContainer.ApplicationPermissions.userDiscoverability)
        // Old sharing code's names: the Objective-C aliases and the iOS 10 participant type.
        let accepted: CKShare_Participant_AcceptanceStatus = .accepted
        let readWrite: CKShare_Participant_Permission = .readWrite
        let owner: CKShare_Participant_Role = .owner
        #expect(accepted == .accepted && readWrite == .readWrite && owner == .owner)
        let share = CKShare(rootRecord: CKRecord(recordType: "List"))
        #expect(share.owner.type == .owner && share.owner.type == CKShare.Participant.ParticipantType.owner)
        let participant = share.owner.copy() as! CKShare.Participant
        participant.type = .privateUser
        #expect(participant.role == .privateUser)
        // Old launch code resets the badge and marks notifications read: both complete.
        let badge = CKModifyBadgeOperation(badgeValue: 0)
        let reset = Locked<Bool>(false)
        badge.modifyBadgeCompletionBlock = { error in reset.withLock { $0 = error == nil } }
        let mark = CKMarkNotificationsReadOperation()
        mark.notificationIDs = nil
        let marked = Locked<Bool>(false)
        mark.markNotificationsReadCompletionBlock = { ids, error in marked.withLock { $0 = error == nil && ids == [] } }
        let queue = OperationQueue()
        mark.database = try ImportCloudKitTests.container().privateCloudDatabase
        queue.addOperations([badge, mark], waitUntilFinished: true)
        #expect(reset.withLock { $0 } && marked.withLock { $0 })
        let defaults = try #require(UserDefaults(suiteName: "ckfs-app-code-\(UUID().uuidString)"))
        defaults.setValue(true, forKey: "zoneCreated")
        #expect(defaults.value(forKey: "zoneCreated") as? Bool == true)
        #expect(defaults.value(forKey: "nothing") == nil)
    }
}

/// As apps write it: a container made in an extension with `Self(identifier:)`.
private enum AppContainer {
    static func app() -> CKContainer { CKContainer.named("iCloud.example.app") }
}

extension CKContainer {
    fileprivate static func named(_ identifier: String) -> Self { Self(identifier: identifier) }
}
