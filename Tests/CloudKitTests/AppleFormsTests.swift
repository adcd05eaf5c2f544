import CloudKit
import CloudStore
import Testing
import TestSupport

/// The other forms Apple's SDK gives the same calls (async, batch, older and newer names),
/// written as apps write them, each checked for what it returns.
@Suite struct AppleFormsTests {
    /// A record is a sequence of its fields, and key-value coding reads and sets them, as
    /// `NSObject` gives Apple's; the system field keys sort a query.
    @available(*, deprecated, message: "calls records(matching:inZoneWith:), which Apple deprecates and apps still call")
    @Test func recordsAsSequencesAndKeyValueCoding() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n1"))
        note.setValue("Groceries", forKey: "title")
        note.setValue(NSNumber(value: 3), forKey: "rank")
        note.setValue(Date(timeIntervalSince1970: 1_800_000_000), forKey: "due")
        note.encryptedValues["secret"] = "kept apart"
        #expect(note.value(forKey: "title") as? String == "Groceries" && note.value(forKey: "rank") as? Int == 3)
        var fields: [String: String] = [:]
        for (key, value) in note { fields[key] = "\(value)" }
        #expect(fields.keys.sorted() == ["due", "rank", "title"], "encrypted fields are not among them")
        note.setValue(nil, forKey: "due")
        #expect(note.value(forKey: "due") == nil && Array(note).count == 2)
        _ = try await db.save(note)
        // Creation dates are kept to the millisecond: the second note is made in a later one,
        // so the sort, not the tie-break by name, decides the order.
        try await Task.sleep(for: .milliseconds(3))

        let later = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n2"))
        later["title"] = "Later"
        _ = try await db.save(later)
        let query = CKQuery(recordType: "Note", predicate: NSPredicate(value: true))
        query.sortDescriptors = [NSSortDescriptor(key: CKRecord.SystemFieldKey.creationDate, ascending: false)]
        #expect(try await db.records(matching: query).matchResults.map(\.0.recordName) == ["n2", "n1"])
        // Apple's older two-argument query (deprecated there too) gives the records themselves.
        let all: [CKRecord] = try await db.records(matching: query, inZoneWith: nil)
        #expect(all.map(\.recordID.recordName) == ["n2", "n1"])
        #expect(CKRecordParentKey == "parent" && CKRecordShareKey == "share" && CKRecordZoneDefaultName == "_defaultZone")
    }

    /// Errors compare and hash as values, as Apple's do.
    @Test func errorsAreEquatableAndHashable() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        var caught: [CKError] = []
        for _ in 0..<2 {
            do { _ = try await db.record(for: CKRecord.ID(recordName: "missing")) } catch let error as CKError { caught.append(error) }
        }
        #expect(caught.count == 2 && caught[0] == caught[1] && Set(caught).count == 1)
        #expect(caught[0] != CKError(.unknownItem, "another message") && caught[0].code == CKError.unknownItem)
    }

    /// Subscriptions as Apple's initializers make them: a query subscription fires on every
    /// change unless told otherwise, and a notification's settings go in one call.
    @available(*, deprecated, message: "reads predicateFormat, as apps do; Linux Foundation deprecates it")
    @Test func subscriptionDefaultsAndTheFullNotificationInfo() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let info = CKSubscription.NotificationInfo(alertBody: "Changed", titleLocalizationArgs: ["title"], desiredKeys: ["title"],
                                                   shouldBadge: true, category: "NOTE")
        #expect(info.alertBody == "Changed" && info.titleLocalizationArgs == ["title"] && info.desiredKeys == ["title"])
        #expect(info.shouldBadge && info.category == "NOTE" && info.soundName == nil && info.alertLocalizationArgs == nil)
        let subscription = CKQuerySubscription(recordType: "Note", predicate: NSPredicate(format: "rank > %d", 1), subscriptionID: "notes")
        #expect(subscription.querySubscriptionOptions == [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion])
        subscription.notificationInfo = info
        let saved = try #require(try await db.save(subscription) as? CKQuerySubscription)
        // Apple declares a query subscription's predicate non-optional.
        let predicate: NSPredicate = saved.predicate
        #expect(predicate.predicateFormat == "rank > 1" && saved.notificationInfo?.category == "NOTE")
    }

    /// An app's model, a plain class that is not `Sendable`, as apps have them.
    final class NoteList {
        var titles: [String] = []
    }

    /// Operation blocks are not `@Sendable`, as Apple declares them: in Swift 6 an app's
    /// blocks capture its model and mutate its locals, then it waits for the operation.
    @Test func operationBlocksCaptureWhatAppsCapture() throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let save = CKModifyRecordsOperation(recordsToSave: ["b", "a"].map { name in
            let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: name))
            note["title"] = "Note \(name)"
            return note
        }, recordIDsToDelete: nil)
        var saved = 0
        save.perRecordSaveBlock = { _, result in if case .success = result { saved += 1 } }
        db.add(save)
        save.waitUntilFinished()
        #expect(saved == 2)

        let model = NoteList()
        var matched = 0
        let query = CKQueryOperation(query: CKQuery(recordType: "Note", predicate: NSPredicate(value: true)))
        query.recordMatchedBlock = { _, result in
            matched += 1
            if case .success(let note) = result, let title = note["title"] as? String { model.titles.append(title) }
        }
        db.add(query)
        query.waitUntilFinished()
        #expect(matched == 2 && model.titles.sorted() == ["Note a", "Note b"])
    }

    /// A query operation made empty and given its query later, as some apps build them.
    @Test func aQueryOperationGivenItsQueryLater() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        for name in ["a", "b"] { _ = try await db.save(CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: name))) }
        let operation = CKQueryOperation()
        operation.query = CKQuery(recordType: "Item", predicate: NSPredicate(value: true))
        operation.timeoutIntervalForRequest = 10
        #expect(operation.configuration.timeoutIntervalForRequest == 10)
        let names = Locked<[String]>([])
        operation.recordMatchedBlock = { id, _ in names.withLock { $0.append(id.recordName) } }
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
            operation.queryResultBlock = { result in done.resume(with: result.map { _ in }) }
            db.add(operation)
        }
        #expect(names.withLock { $0.sorted() } == ["a", "b"])
    }

    /// The container's batch and async forms: identities and share participants by several
    /// keys at once (found ones only, or a result per key), permissions, and the long-lived
    /// operations a local store never keeps.
    @Test func containerBatchAndAsyncForms() async throws {
        let path = TemporaryStores.path("ckfs-forms-")
        let store = try Store.create(at: path)
        for name in ["mei", "ana", "bo"] { try store.container().addUser(name, emails: ["\(name)@example.com"]) }
        let mei = try CKContainer(store: store, user: "mei")
        let ana = try CKContainer(store: Store.open(at: path), user: "ana") { _ in true }
        let permissions: CKContainer.Application.Permissions = .userDiscoverability
        #expect(try await ana.applicationPermissionStatus(for: permissions) == .initialState)
        #expect(try await ana.requestApplicationPermission(permissions) == .granted)
        #expect(try await ana.applicationPermissionStatus(for: permissions) == .granted)

        let byEmail = try await mei.userIdentities(forEmailAddresses: ["ana@example.com", "bo@example.com", "nobody@example.com"])
        #expect(Array(byEmail.keys) == ["ana@example.com"], "bo never granted discoverability; nobody is no one")
        let anaID = try #require(byEmail["ana@example.com"]?.userRecordID)
        #expect(try await ana.userRecordID() == anaID)
        #expect(try await mei.userIdentities(forUserRecordIDs: [anaID])[anaID]?.lookupInfo?.userRecordID == anaID)
        #expect(try await mei.userIdentities(forPhoneNumbers: ["+1 555 0100"]).isEmpty)
        let viaHandler: [String: CKUserIdentity] = try await withCheckedThrowingContinuation { c in
            mei.discoverUserIdentities(forEmailAddresses: ["ana@example.com"]) { c.resume(with: $0) }
        }
        #expect(viaHandler["ana@example.com"]?.userRecordID == anaID)

        let participants = try await mei.shareParticipants(forEmailAddresses: ["bo@example.com", "nobody@example.com"])
        #expect((try? participants["bo@example.com"]?.get())?.userIdentity.lookupInfo?.emailAddress == "bo@example.com")
        #expect(((participants["nobody@example.com"].flatMap { if case .failure(let e) = $0 { e } else { nil } }) as? CKError)?.code == .unknownItem)
        let lookup = CKUserIdentity.LookupInfo(phoneNumber: "+1 555 0100")
        let byLookup = try await mei.shareParticipants(for: [lookup])
        #expect(((byLookup[lookup].flatMap { if case .failure(let e) = $0 { e } else { nil } }) as? CKError)?.code == .unknownItem)
        let viaFetch: [CKRecord.ID: Result<CKShare.Participant, any Error>] = try await withCheckedThrowingContinuation { c in
            mei.fetchShareParticipants(forUserRecordIDs: [anaID]) { c.resume(with: $0) }
        }
        #expect((try? viaFetch[anaID]?.get())?.userIdentity.userRecordID == anaID)

        #expect(try await mei.allLongLivedOperationIDs().isEmpty)
        let kept = try await mei.longLivedOperation(for: "any")
        #expect(kept == nil)
        let configured = mei.configuredWith(configuration: CKOperation.Configuration()) { $0.containerIdentifier }
        #expect(configured == mei.containerIdentifier)
    }

    /// A zone with per-zone encryption (iOS 26): the scope is set before the first save, kept
    /// in `zone.json`, and never changes; such a zone is shared only whole.
    @Test func aZoneWithPerZoneEncryption() async throws {
        let path = TemporaryStores.path("ckfs-scope-")
        let db = try CKContainer(store: Store.create(at: path), user: "mei").privateCloudDatabase
        let vault = CKRecordZone(zoneName: "Vault")
        #expect(vault.encryptionScope == .perRecord)
        vault.encryptionScope = .perZone
        let saved = try await db.save(vault)
        #expect(saved.encryptionScope == .perZone && saved.capabilities.contains(.zoneWideSharing) && !saved.capabilities.contains(.sharing))
        let other = try CKContainer(store: Store.open(at: path), user: "mei").privateCloudDatabase
        #expect(try await other.recordZone(for: vault.zoneID).encryptionScope == .perZone)
        #expect(try await db.save(CKRecordZone(zoneName: "Plain")).capabilities.contains(.sharing))
        #expect(try FoundationObjectTests.roundTrip(saved).encryptionScope == .perZone)
        let copy = try #require(saved.copy() as? CKRecordZone)
        copy.encryptionScope = .perRecord
        #expect(copy == saved && saved.encryptionScope == .perZone, "the copy's scope is its own")

        // The file says so, for an outside reader.
        let files = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
        let zoneFile = try #require(files.first { $0.hasSuffix("/Vault/zone.json") })
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + "/" + zoneFile))) as? [String: Any]
        #expect(json?["encryptionScope"] as? String == "perZone")

        // Saving it again with another scope is refused, as Apple's server refuses it.
        var code: CKError.Code?
        do { _ = try await db.save(CKRecordZone(zoneName: "Vault")) } catch let error as CKError { code = error.code }
        #expect(code == .invalidArguments)

        // Shared only whole: a hierarchy share is refused, a zone-wide one saves.
        let note = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: "n", zoneID: vault.zoneID))
        let hierarchy = CKShare(rootRecord: note)
        let refused = try await db.modifyRecords(saving: [note, hierarchy], deleting: [], atomically: false)
        let shareError = refused.saveResults[hierarchy.recordID].flatMap { if case .failure(let e) = $0 { e } else { nil } } as? CKError
        #expect(shareError?.code == .invalidArguments && shareError?.message.contains("per-zone encryption") == true)
        let whole = CKShare(recordZoneID: vault.zoneID)
        let sharedWhole = try await db.modifyRecords(saving: [whole], deleting: [])
        #expect((try sharedWhole.saveResults[whole.recordID]?.get()) is CKShare)
    }
}
