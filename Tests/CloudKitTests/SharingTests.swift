import CloudKit
import CloudStore
import Testing
import TestSupport

/// Sharing as CloudKit code does it, with `import CloudKit` alone: the owner shares a list
/// with `CKShare(rootRecord:)`, adds participants found by email, and saves share and root
/// together; each participant opens the URL, accepts, and syncs the shared database.
@Suite struct SharingTests {
    @Test func ownerSharesAListAndParticipantsSyncIt() async throws {
        let path = TemporaryStores.path("ckfs-sharing-")
        let store = try Store.create(at: path)
        for name in ["olivia", "wes", "rita"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
        let olivia = try CKContainer(store: store, user: "olivia", deviceID: "olivia-phone")
        let wes = try CKContainer(store: Store.open(at: path), user: "wes", deviceID: "wes-phone")
        let rita = try CKContainer(store: Store.open(at: path), user: "rita", deviceID: "rita-phone")

        // The owner's list, in a custom zone, with an item under it.
        let zone = CKRecordZone(zoneName: "Lists")
        let savedZone = try await olivia.privateCloudDatabase.save(zone)
        #expect(savedZone.capabilities.contains([.sharing, .zoneWideSharing]))
        let list = CKRecord(recordType: "List", recordID: CKRecord.ID(recordName: "groceries", zoneID: zone.zoneID))
        list["title"] = "Groceries"
        let milk = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "milk", zoneID: zone.zoneID))
        milk["text"] = "milk"
        milk.setParent(list)
        let share = CKShare(rootRecord: list)
        share[CKShare.SystemFieldKey.title] = "Groceries"
        let writer = try await olivia.shareParticipant(forEmailAddress: "wes@example.com")
        writer.permission = .readWrite
        share.addParticipant(writer)
        let lookup = CKFetchShareParticipantsOperation(userIdentityLookupInfos: [CKUserIdentity.LookupInfo(emailAddress: "rita@example.com")])
        let found = Locked<[CKShare.Participant]>([])
        lookup.perShareParticipantResultBlock = { _, result in if case .success(let p) = result { found.withLock { $0.append(p) } } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            lookup.completionBlock = { done.resume() }
            olivia.add(lookup)
        }
        let reader = try #require(found.withLock { $0.first })
        reader.permission = .readOnly
        share.addParticipant(reader)
        let (saved, _) = try await olivia.privateCloudDatabase.modifyRecords(saving: [list, milk, share], deleting: [])
        let savedShare = try #require(try saved[share.recordID]?.get() as? CKShare)
        let url = try #require(savedShare.url)
        #expect(savedShare.participants.count == 3)
        // Kept by sync code as any record is: archived, and copied, it keeps its URL.
        let data = try NSKeyedArchiver.archivedData(withRootObject: savedShare, requiringSecureCoding: true)
        let archived = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKShare.self, from: data))
        #expect(archived.url == url && archived.participants.count == 3)
        #expect((savedShare.copy() as? CKShare)?.url == url)
        #expect(savedShare.owner.role == .owner)
        #expect(try saved[list.recordID]?.get().share?.recordID.recordName == share.recordID.recordName)

        // Wes opens the URL, sees his part, accepts.
        let metadata = try await wes.shareMetadata(for: url)
        #expect(metadata.participantPermission == .readWrite)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.hierarchicalRootRecordID?.recordName == "groceries")
        let accepted = try await wes.accept(metadata)
        #expect(accepted.currentUserParticipant?.acceptanceStatus == .accepted)

        // Rita accepts with the operation and its blocks.
        let fetch = CKFetchShareMetadataOperation(shareURLs: [url])
        fetch.shouldFetchRootRecord = true
        let ritaMetadata = Locked<CKShare.Metadata?>(nil)
        fetch.perShareMetadataResultBlock = { _, result in ritaMetadata.withLock { $0 = try? result.get() } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            fetch.completionBlock = { done.resume() }
            rita.add(fetch)
        }
        let m = try #require(ritaMetadata.withLock { $0 })
        #expect(m.rootRecord?["title"] as? String == "Groceries")
        let accept = CKAcceptSharesOperation(shareMetadatas: [m])
        let acceptResult = Locked<Result<CKShare, Error>?>(nil)
        accept.perShareResultBlock = { _, result in acceptResult.withLock { $0 = result } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            accept.completionBlock = { done.resume() }
            rita.add(accept)
        }
        _ = try #require(acceptResult.withLock { $0 }).get()

        // Wes syncs his shared database the way sync code does: zones, then their changes.
        let shared = wes.sharedCloudDatabase
        #expect(shared.databaseScope == .shared)
        let changes = try await shared.databaseChanges(since: nil)
        let sharedZone = try #require(changes.modifications.first?.zoneID)
        #expect(sharedZone.zoneName == "Lists")
        #expect(sharedZone.ownerName == (try await olivia.userRecordID().recordName))
        let zoneChanges = try await shared.recordZoneChanges(inZoneWith: sharedZone, since: nil)
        let names = Set(zoneChanges.modificationResultsByID.keys.map(\.recordName))
        #expect(names == ["groceries", "milk", share.recordID.recordName])

        // He edits the item and adds one under the list; the owner sees both, made by wes.
        let fetchedMilk = try await shared.record(for: CKRecord.ID(recordName: "milk", zoneID: sharedZone))
        fetchedMilk["text"] = "oat milk"
        let eggs = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: "eggs", zoneID: sharedZone))
        eggs["text"] = "eggs"
        eggs.parent = CKRecord.Reference(recordID: CKRecord.ID(recordName: "groceries", zoneID: sharedZone), action: .none)
        let (wesSaves, _) = try await shared.modifyRecords(saving: [fetchedMilk, eggs], deleting: [])
        for (_, r) in wesSaves { _ = try r.get() }
        let ownerEggs = try await olivia.privateCloudDatabase.record(for: CKRecord.ID(recordName: "eggs", zoneID: zone.zoneID))
        #expect(ownerEggs["text"] as? String == "eggs")
        #expect(ownerEggs.parent?.recordID.recordName == "groceries")
        #expect(ownerEggs.creatorUserRecordID?.recordName == (try await wes.userRecordID().recordName))

        // Rita reads but cannot write: CloudKit's permissionFailure, per record.
        let ritaShared = rita.sharedCloudDatabase
        let ritaEggs = try await ritaShared.record(for: CKRecord.ID(recordName: "eggs", zoneID: sharedZone))
        ritaEggs["text"] = "rita's eggs"
        let (ritaSaves, _) = try await ritaShared.modifyRecords(saving: [ritaEggs], deleting: [])
        #expect((ritaSaves[ritaEggs.recordID].map { r -> CKError.Code? in
            if case .failure(let e) = r { return (e as? CKError)?.code }
            return nil
        } ?? nil) == .permissionFailure)

        // A database subscription on the shared database: rita hears of the owner's change to
        // a shared item, as a database notification of the shared database; a query
        // subscription is refused there, as Apple's.
        _ = try await ritaShared.save(CKDatabaseSubscription(subscriptionID: "shared-changes"))
        var refused: CKError.Code?
        do { _ = try await ritaShared.save(CKQuerySubscription(recordType: "Item", predicate: NSPredicate(value: true), options: .firesOnRecordUpdate)) }
        catch let e as CKError { refused = e.code }
        #expect(refused == .invalidArguments)
        let start = try rita.notificationChanges().token
        let ownerMilk = try await olivia.privateCloudDatabase.record(for: milk.recordID)
        ownerMilk["text"] = "whole milk"
        _ = try await olivia.privateCloudDatabase.save(ownerMilk)
        let heard = try rita.notificationChanges(since: start).notifications
        #expect(heard.count == 1)
        #expect((heard.first as? CKDatabaseNotification)?.databaseScope == .shared)
        #expect(try await ritaShared.allSubscriptions().map(\.subscriptionID) == ["shared-changes"])

        // A record outside the hierarchy is not there for them.
        let diary = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "diary", zoneID: zone.zoneID))
        _ = try await olivia.privateCloudDatabase.save(diary)
        let hidden = await #expect(throws: CKError.self) { _ = try await shared.record(for: CKRecord.ID(recordName: "diary", zoneID: sharedZone)) }
        #expect(hidden?.code == .unknownItem, "as a record that does not exist")
    }

    /// A zone shared whole names its share (`CKRecordZone.share`) when fetched, archived or
    /// not, and no longer once the share is deleted; a zone made here names none.
    @Test func aZoneSharedWholeNamesItsShare() async throws {
        let path = TemporaryStores.path("ckfs-zoneshare-")
        let store = try Store.create(at: path)
        try store.container().addUser("olivia")
        let db = try CKContainer(store: store, user: "olivia", deviceID: "olivia-phone").privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Trip")
        let made = try await db.save(CKRecordZone(zoneID: zoneID))
        #expect(made.share == nil)
        #expect(try await db.recordZone(for: zoneID).share == nil)
        let share = CKShare(recordZoneID: zoneID)
        _ = try await db.modifyRecords(saving: [share], deleting: [])
        let fetched = try await db.recordZone(for: zoneID)
        #expect(fetched.share?.recordID == CKRecord.ID(recordName: CKRecordNameZoneWideShare, zoneID: zoneID))
        #expect(try await db.allRecordZones().first { $0.zoneID == zoneID }?.share?.recordID.recordName == CKRecordNameZoneWideShare)
        let data = try NSKeyedArchiver.archivedData(withRootObject: fetched, requiringSecureCoding: true)
        let archived = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecordZone.self, from: data))
        #expect(archived.share?.recordID.recordName == CKRecordNameZoneWideShare)
        #expect(CKRecordZone(zoneID: zoneID).share == nil)
        _ = try await db.modifyRecords(saving: [], deleting: [share.recordID])
        #expect(try await db.recordZone(for: zoneID).share == nil)
    }
}

/// A value behind a lock, for the blocks operations call on their threads.
final class Locked<Value>: @unchecked Sendable {
    /// Guards `value`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
