import CloudKit
import CloudStore
import Testing
import TestSupport

/// CloudKit's classes are Foundation objects, as Apple's are: apps archive the queries and
/// subscriptions they set up and the identities they found, keep lookups in dictionaries,
/// subclass `CKRecord`, and hold containers and databases where an `NSObject` is asked for.
@Suite struct FoundationObjectTests {
    static func roundTrip<T: NSObject & NSSecureCoding>(_ object: T) throws -> T {
        let data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)
        return try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: T.self, from: data))
    }

    /// A predicate's text has its arguments in place, as Apple's `predicateFormat` does, and
    /// predicates of the same text are equal and hash alike.
    @available(*, deprecated, message: "reads predicateFormat, as apps do; Linux Foundation deprecates it")
    @Test func predicatesShowTheirArgumentsAndCompareByText() {
        let sea = NSPredicate(format: "title BEGINSWITH %@ AND rank > %d", "Sea \"side\"", 3)
        #expect(sea.predicateFormat == #"title BEGINSWITH "Sea \"side\"" AND rank > 3"#)
        let same = NSPredicate(format: #"title BEGINSWITH "Sea \"side\"" AND rank > 3"#)
        #expect(sea == same && sea.hash == same.hash && Set([sea, same]).count == 1)
        #expect(sea != NSPredicate(format: "title BEGINSWITH %@ AND rank > %d", "Sea", 3))
        #expect(NSPredicate(value: true).predicateFormat == "TRUEPREDICATE")
        // A format that does not parse keeps the caller's text, to say what was refused.
        #expect(NSPredicate(format: "title LIKE %@", "a*").predicateFormat == "title LIKE %@")
        #expect(NSSortDescriptor(key: "day", ascending: false) == NSSortDescriptor(key: "day", ascending: false))
        #expect(NSSortDescriptor(key: "day", ascending: false) != NSSortDescriptor(key: "day", ascending: true))
    }

    /// An app keeps the queries it runs again in an archive; the query read back finds the
    /// same records in the same order, with its compound predicate and its sorts, and one
    /// CloudKit refuses is still refused, for the same reason.
    @Test func aQueryArchivesAndRunsTheSame() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let folder = CKRecord.ID(recordName: "folder")
        for i in 0..<8 {
            let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n\(i)"))
            note["rank"] = i % 4
            note["title"] = i % 2 == 0 ? "Sea \(i)" : "Lake \(i)"
            note["day"] = Date(timeIntervalSince1970: 1_800_000_000 + Double(i) * 86_400)
            note["folder"] = CKRecord.Reference(recordID: folder, action: .none)
            note["at"] = Location(latitude: 48 + Double(i), longitude: 2)
            _ = try await db.save(note)
        }
        let query = CKQuery(recordType: "Note", predicate: NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "day >= %@ AND folder == %@", Date(timeIntervalSince1970: 1_800_000_000 + 86_400) as NSDate,
                        CKRecord.Reference(recordID: folder, action: .none)),
            NSCompoundPredicate(notPredicateWithSubpredicate: NSPredicate(format: "title BEGINSWITH %@", "Lake")),
        ]))
        query.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: false), NSSortDescriptor(key: "day", ascending: true)]
        let restored = try Self.roundTrip(query)
        #expect(restored !== query && restored.recordType == "Note")
        #expect(restored.predicate == query.predicate && restored.predicate is NSCompoundPredicate)
        #expect((restored.predicate as? NSCompoundPredicate)?.subpredicates.count == 2)
        #expect(restored.sortDescriptors == query.sortDescriptors)
        let expected = try await db.records(matching: query).matchResults.map(\.0.recordName)
        #expect(expected == ["n2", "n6", "n4"])
        #expect(try await db.records(matching: restored).matchResults.map(\.0.recordName) == expected)

        let nearest = CKQuery(recordType: "Note", predicate: NSPredicate(value: true))
        nearest.sortDescriptors = [CKLocationSortDescriptor(key: "at", relativeLocation: Location(latitude: 52.2, longitude: 2))]
        let nearestBack = try Self.roundTrip(nearest)
        #expect(nearestBack.sortDescriptors == nearest.sortDescriptors)
        #expect(try await db.records(matching: nearestBack, resultsLimit: 3).matchResults.map(\.0.recordName) == ["n4", "n5", "n3"])

        let copy = try #require(query.copy() as? CKQuery)
        copy.sortDescriptors = nil
        #expect(copy !== query && query.sortDescriptors?.count == 2 && copy.predicate == query.predicate)

        for refused in [NSCompoundPredicate(orPredicateWithSubpredicates: [NSPredicate(format: "rank == 1"), NSPredicate(format: "rank == 2")]),
                        NSPredicate(format: "title LIKE %@", "a*")] {
            let back = try Self.roundTrip(CKQuery(recordType: "Note", predicate: refused))
            var errors: [String] = []
            for q in [CKQuery(recordType: "Note", predicate: refused), back] {
                do { _ = try await db.records(matching: q); errors.append("answered") } catch let error as CKError {
                    #expect(error.code == .invalidArguments)
                    errors.append(error.message)
                }
            }
            #expect(errors.count == 2 && errors[0] == errors[1] && errors[0] != "answered", "\(refused)")
        }
    }

    /// Subscription setup code archives what it saved; each kind comes back as its own class
    /// with its settings, saves again, and a copy is a subscription of its own.
    @Test func subscriptionsArchiveAsTheirOwnKind() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Tasks")
        _ = try await db.save(CKRecordZone(zoneID: zoneID))
        let urgent = CKQuerySubscription(recordType: "Task", predicate: NSPredicate(format: "priority >= %d", 3), subscriptionID: "urgent",
                                         options: [.firesOnRecordCreation, .firesOnRecordUpdate])
        urgent.zoneID = zoneID
        let info = CKSubscription.NotificationInfo()
        info.alertBody = "An urgent task"
        info.desiredKeys = ["title"]
        info.shouldBadge = true
        urgent.notificationInfo = info
        let zone = CKRecordZoneSubscription(zoneID: zoneID, subscriptionID: "tasks")
        zone.recordType = "Task"
        let database = CKDatabaseSubscription(subscriptionID: "everything")

        let data = try NSKeyedArchiver.archivedData(withRootObject: NSArray(array: [urgent, zone, database]), requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, CKSubscription.self], from: data) as? [CKSubscription])
        let urgentBack = try #require(back.first as? CKQuerySubscription)
        #expect(urgentBack.subscriptionID == "urgent" && urgentBack.recordType == "Task" && urgentBack.zoneID == zoneID)
        #expect(urgentBack.predicate == urgent.predicate && urgentBack.querySubscriptionOptions == [.firesOnRecordCreation, .firesOnRecordUpdate])
        #expect(urgentBack.notificationInfo?.alertBody == "An urgent task" && urgentBack.notificationInfo?.desiredKeys == ["title"])
        #expect(urgentBack.notificationInfo?.shouldBadge == true && urgentBack.notificationInfo !== info)
        let zoneBack = try #require(back.dropFirst().first as? CKRecordZoneSubscription)
        #expect(zoneBack.zoneID == zoneID && zoneBack.recordType == "Task" && zoneBack.subscriptionType == .recordZone)
        #expect((back.last as? CKDatabaseSubscription)?.subscriptionID == "everything")

        let saved = try await db.modifySubscriptions(saving: back, deleting: [])
        #expect(saved.saveResults.count == 3 && saved.saveResults.values.allSatisfy { (try? $0.get()) != nil })
        let fetched = try #require(try await db.subscription(for: "urgent") as? CKQuerySubscription)
        #expect(fetched.notificationInfo?.alertBody == "An urgent task" && fetched.zoneID == zoneID)

        // A subscription whose predicate CloudKit refuses is refused again after the archive.
        let bad = try Self.roundTrip(CKQuerySubscription(recordType: "Task", predicate: NSPredicate(format: "title MATCHES %@", "a.*"), options: .firesOnRecordCreation))
        await #expect(throws: CKError.self) { _ = try await db.save(bad) }

        let copy = try #require(urgent.copy() as? CKQuerySubscription)
        copy.notificationInfo?.alertBody = "changed"
        copy.zoneID = nil
        #expect(copy !== urgent && urgent.notificationInfo?.alertBody == "An urgent task" && urgent.zoneID == zoneID)
        #expect(copy.subscriptionID == "urgent" && copy.zoneID == nil)
        let infoCopy = try #require(info.copy() as? CKSubscription.NotificationInfo)
        infoCopy.alertBody = nil
        #expect(info.alertBody == "An urgent task" && infoCopy !== info)
    }

    /// The identities discovery gives are kept by apps (a contact picker's results): archived,
    /// read back equal; lookups are dictionary keys, equal when they look up the same way.
    @Test func identitiesArchiveAndLookupsAreKeys() async throws {
        let path = TemporaryStores.path("ckfs-identity-")
        let store = try Store.create(at: path)
        for name in ["mei", "ana"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
        let mei = try CKContainer(store: store, user: "mei")
        let ana = try CKContainer(store: Store.open(at: path), user: "ana") { _ in true }
        #expect(try await ana.requestApplicationPermission(.userDiscoverability) == .granted)
        let found = try #require(try await mei.userIdentity(forEmailAddress: "ana@example.com"))
        #expect(found.hasiCloudAccount && found.lookupInfo?.emailAddress == "ana@example.com")
        let back = try Self.roundTrip(found)
        #expect(back == found && back !== found && back.userRecordID == found.userRecordID)
        #expect(back.nameComponents == found.nameComponents && back.lookupInfo == found.lookupInfo && back.contactIdentifiers.isEmpty)

        let byEmail = CKUserIdentity.LookupInfo(emailAddress: "ana@example.com")
        let byID = CKUserIdentity.LookupInfo(userRecordID: try #require(found.userRecordID))
        var names: [CKUserIdentity.LookupInfo: String] = [byEmail: "Ana", byID: "Ana by ID"]
        names[CKUserIdentity.LookupInfo(emailAddress: "ana@example.com")] = "Ana again"
        #expect(names.count == 2 && names[byEmail] == "Ana again")
        #expect(try Self.roundTrip(byID) == byID)
        #expect(CKUserIdentity.LookupInfo.lookupInfos(withPhoneNumbers: ["+1 555 0100"]).first?.phoneNumber == "+1 555 0100")
    }

    /// A participant and a share's metadata archive, as apps keep them: a participant reads
    /// back with its permission, and metadata kept across a relaunch is accepted.
    @Test func participantsAndShareMetadataArchive() async throws {
        let path = TemporaryStores.path("ckfs-share-archive-")
        let store = try Store.create(at: path)
        for name in ["olivia", "wes"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
        let olivia = try CKContainer(store: store, user: "olivia")
        let zone = CKRecordZone(zoneName: "Lists")
        _ = try await olivia.privateCloudDatabase.save(zone)
        let list = CKRecord(recordType: "List", recordID: CKRecord.ID(recordName: "groceries", zoneID: zone.zoneID))
        let share = CKShare(rootRecord: list)
        let writer = try await olivia.shareParticipant(forEmailAddress: "wes@example.com")
        writer.permission = .readWrite
        let writerBack = try Self.roundTrip(writer)
        #expect(writerBack == writer && writerBack.permission == .readWrite && writerBack.userIdentity.lookupInfo?.emailAddress == "wes@example.com")
        share.addParticipant(writerBack)
        let (saved, _) = try await olivia.privateCloudDatabase.modifyRecords(saving: [list, share], deleting: [])
        let url = try #require((try saved[share.recordID]?.get() as? CKShare)?.url)

        let wes = try CKContainer(store: Store.open(at: path), user: "wes")
        let bogus = try #require(URL(string: "ckfs://\(olivia.containerIdentifier ?? "")/share/nothing"))
        let fetched: [URL: Result<CKShare.Metadata, any Error>] = try await withCheckedThrowingContinuation { c in
            wes.fetchShareMetadatas(for: [url, bogus]) { c.resume(with: $0) }
        }
        let metadata = try #require(try fetched[url]?.get())
        #expect(fetched.count == 2 && (try? fetched[bogus]?.get()) == nil)
        let kept = try NSKeyedArchiver.archivedData(withRootObject: metadata, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKShare.Metadata.self, from: kept))
        #expect(restored == metadata && restored.participantPermission == .readWrite && restored.participantStatus == .pending)
        #expect(restored.hierarchicalRootRecordID?.recordName == "groceries" && restored.ownerIdentity.userRecordID == metadata.ownerIdentity.userRecordID)
        let relaunched = try CKContainer(store: Store.open(at: path), user: "wes")
        let accepted: [CKShare.Metadata: Result<CKShare, any Error>] = try await withCheckedThrowingContinuation { c in
            relaunched.accept([restored]) { c.resume(with: $0) }
        }
        #expect((try accepted[restored]?.get())?.currentUserParticipant?.acceptanceStatus == .accepted)
    }

    /// A zone's fetch settings and an operation group archive with what they hold.
    @Test func zoneConfigurationsAndGroupsArchive() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let zoneID = CKRecordZone.ID(zoneName: "Tasks")
        _ = try await db.save(CKRecordZone(zoneID: zoneID))
        let token = try await db.recordZoneChanges(inZoneWith: zoneID, since: nil).changeToken
        let configuration = CKFetchRecordZoneChangesOperation.ZoneConfiguration(previousServerChangeToken: token, resultsLimit: 5, desiredKeys: ["title"])
        let back = try Self.roundTrip(configuration)
        #expect(back.previousServerChangeToken == token && back.resultsLimit == 5 && back.desiredKeys == ["title"])
        let copy = try #require(configuration.copy() as? CKFetchRecordZoneChangesOperation.ZoneConfiguration)
        copy.resultsLimit = 1
        #expect(configuration.resultsLimit == 5 && CKFetchRecordZoneChangesOperation.ZoneConfiguration(resultsLimit: nil).resultsLimit == 0)

        let group = CKOperationGroup()
        group.name = "Import"
        group.quantity = 40
        group.expectedSendSize = .megabytes
        let groupBack = try Self.roundTrip(group)
        #expect(groupBack.operationGroupID == group.operationGroupID && groupBack.name == "Import" && groupBack.quantity == 40)
        #expect(groupBack.expectedSendSize == .megabytes && groupBack.expectedReceiveSize == .unknown)
    }

    /// An app's own record class, as Apple's `CKRecord` allows: made, saved, and read back
    /// (as a plain `CKRecord`, as on Apple's platforms).
    @Test func anAppSubclassesCKRecord() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let note = Note(title: "Groceries")
        #expect(note.title == "Groceries" && note.recordType == "Note")
        _ = try await db.save(note)
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched["title"] as? String == "Groceries")
    }

    /// Containers, databases, queries, subscriptions, notifications and the key-value store
    /// go where an `NSObject` is asked for, as Apple's do.
    @Test func theClassesAreNSObjects() throws {
        let container = try ImportCloudKitTests.container()
        let objects: [NSObject] = [
            container, container.privateCloudDatabase, CKQuery(recordType: "Note", predicate: NSPredicate(value: true)),
            CKDatabaseSubscription(), CKSubscription.NotificationInfo(), NSUbiquitousKeyValueStore.default,
            NSPredicate(value: true), NSSortDescriptor(key: "day", ascending: true),
        ]
        #expect(objects.count == 8)
        let _: (CKNotification) -> NSObject = { $0 }
        let _: (CKUserIdentity) -> NSObject = { $0 }
        #expect(container.isEqual(container) && !container.isEqual(container.privateCloudDatabase))
    }
}

/// A record type of the app's own, as CloudKit code writes one.
final class Note: CKRecord, @unchecked Sendable {
    convenience init(title: String) {
        self.init(recordType: "Note")
        self["title"] = title
    }

    var title: String? { self["title"] }
}
