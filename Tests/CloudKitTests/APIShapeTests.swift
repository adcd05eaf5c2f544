import CloudKit
import Testing
import TestSupport

/// The shapes of Apple's CloudKit API that CloudKit code is written against, checked by the
/// compiler: each line binds a member to the type Apple's SDK declares (names, argument labels,
/// optionality, result shapes). A member that drifts from Apple's shape stops this file from
/// compiling. The few runtime checks are the values Apple documents.
@Suite struct APIShapeTests {
    @available(*, deprecated, message: "binds the deprecated names apps still call to their types")
    @Test func containersAndDatabases() throws {
        let container = try ImportCloudKitTests.container()
        let _: () -> CKContainer = CKContainer.default
        let _: (String) -> CKContainer = CKContainer.init(identifier:)
        let _: String? = container.containerIdentifier
        let _: CKDatabase = container.privateCloudDatabase
        let _: CKDatabase = container.publicCloudDatabase
        let scope: CKDatabase.Scope = .private
        let db: CKDatabase = container.database(with: scope)
        #expect(db.databaseScope == .private && CKDatabase.Scope.public.rawValue == 1 && CKDatabase.Scope.private.rawValue == 2)
        let _: (CKOperation) -> Void = container.add
        let _: (@escaping @Sendable (CKAccountStatus, Error?) -> Void) -> Void = container.accountStatus(completionHandler:)
        let permissionBlock: CKApplicationPermissionBlock = { _, _ in }
        container.status(forApplicationPermission: .userDiscoverability, completionHandler: permissionBlock)
        let _: (@escaping @Sendable (CKRecord.ID?, Error?) -> Void) -> Void = container.fetchUserRecordID(completionHandler:)
        let _: (CKDatabaseOperation) -> Void = db.add
        let _: (String) async throws -> CKUserIdentity? = container.userIdentity(forEmailAddress:)
        let _: () async throws -> [CKUserIdentity] = container.allUserIdentitiesFromContacts
        let _: ([String]) async throws -> [String: CKUserIdentity] = container.userIdentities(forEmailAddresses:)
        let _: ([CKRecord.ID]) async throws -> [CKRecord.ID: CKUserIdentity] = container.userIdentities(forUserRecordIDs:)
        let _: ([String], @escaping @Sendable (Result<[String: CKUserIdentity], any Error>) -> Void) -> Void = container.discoverUserIdentities(forPhoneNumbers:completionHandler:)
        let _: (String) async throws -> CKShare.Participant = container.shareParticipant(forPhoneNumber:)
        let _: ([CKRecord.ID]) async throws -> [CKRecord.ID: Result<CKShare.Participant, any Error>] = container.shareParticipants(forUserRecordIDs:)
        let _: ([CKUserIdentity.LookupInfo]) async throws -> [CKUserIdentity.LookupInfo: Result<CKShare.Participant, any Error>] = container.shareParticipants(for:)
        let _: (String, @escaping @Sendable (CKShare.Participant?, Error?) -> Void) -> Void = container.fetchShareParticipant(withPhoneNumber:completionHandler:)
        let _: ([String], @escaping @Sendable (Result<[String: Result<CKShare.Participant, any Error>], any Error>) -> Void) -> Void
            = container.fetchShareParticipants(forEmailAddresses:completionHandler:)
        let _: ([URL], @escaping @Sendable (Result<[URL: Result<CKShare.Metadata, any Error>], any Error>) -> Void) -> Void = container.fetchShareMetadatas(for:completionHandler:)
        let _: ([CKShare.Metadata], @escaping @Sendable (Result<[CKShare.Metadata: Result<CKShare, any Error>], any Error>) -> Void) -> Void = container.accept(_:completionHandler:)
        let _: (@escaping @Sendable ([CKOperation.ID]?, Error?) -> Void) -> Void = container.fetchAllLongLivedOperationIDs(completionHandler:)
        let _: (CKOperation.ID, @escaping @Sendable (CKOperation?, Error?) -> Void) -> Void = container.fetchLongLivedOperation(withID:completionHandler:)
        let _: (CKContainer.Application.Permissions) async throws -> CKContainer.Application.PermissionStatus = container.applicationPermissionStatus(for:)
        let _: () async throws -> CKRecord.ID = container.userRecordID
        let _: Int = container.configuredWith { _ in 1 }
        let _: Int = db.configuredWith(group: CKOperationGroup()) { _ in 1 }
        let _: (CKQuery, CKRecordZone.ID?) async throws -> [CKRecord] = db.perform(_:inZoneWith:)
        let _: (CKServerChangeToken?, Int?, @escaping @Sendable (Result<(modifications: [CKDatabase.DatabaseChange.Modification],
                                                                         deletions: [CKDatabase.DatabaseChange.Deletion],
                                                                         changeToken: CKServerChangeToken, moreComing: Bool), Error>) -> Void) -> Void
            = db.fetchDatabaseChanges(since:resultsLimit:completionHandler:)
        let _: (String) async throws -> CKUserIdentity? = container.userIdentity(forPhoneNumber:)
        let _: (CKRecord.ID) async throws -> CKUserIdentity? = container.userIdentity(forUserRecordID:)

        let _: (CKRecord.ID) async throws -> CKRecord = db.record(for:)
        let _: ([CKRecord.ID], [CKRecord.FieldKey]?) async throws -> [CKRecord.ID: Result<CKRecord, Error>] = db.records(for:desiredKeys:)
        let _: (CKRecord) async throws -> CKRecord = db.save
        let _: (CKRecord.ID) async throws -> CKRecord.ID = db.deleteRecord(withID:)
        let _: ([CKRecord], [CKRecord.ID], CKModifyRecordsOperation.RecordSavePolicy, Bool) async throws
            -> (saveResults: [CKRecord.ID: Result<CKRecord, Error>], deleteResults: [CKRecord.ID: Result<Void, Error>]) = db.modifyRecords(saving:deleting:savePolicy:atomically:)
        let _: (CKQuery, CKRecordZone.ID?, [CKRecord.FieldKey]?, Int) async throws
            -> (matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?) = db.records(matching:inZoneWith:desiredKeys:resultsLimit:)
        let _: (CKQueryOperation.Cursor, [CKRecord.FieldKey]?, Int) async throws
            -> (matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?) = db.records(continuingMatchFrom:desiredKeys:resultsLimit:)
        let _: (CKRecord.ID, @escaping @Sendable (CKRecord?, Error?) -> Void) -> Void = db.fetch(withRecordID:completionHandler:)
        let _: (CKRecord, @escaping @Sendable (CKRecord?, Error?) -> Void) -> Void = db.save(_:completionHandler:)
        let _: (CKRecord.ID, @escaping @Sendable (CKRecord.ID?, Error?) -> Void) -> Void = db.delete(withRecordID:completionHandler:)
        let _: (CKQuery, CKRecordZone.ID?, @escaping @Sendable ([CKRecord]?, Error?) -> Void) -> Void = db.perform(_:inZoneWith:completionHandler:)
        let _: (CKQuery, CKRecordZone.ID?, [CKRecord.FieldKey]?, Int,
                @escaping @Sendable (Result<(matchResults: [(CKRecord.ID, Result<CKRecord, Error>)], queryCursor: CKQueryOperation.Cursor?), Error>) -> Void) -> Void
            = db.fetch(withQuery:inZoneWith:desiredKeys:resultsLimit:completionHandler:)

        let _: (CKRecordZone) async throws -> CKRecordZone = db.save
        let _: (CKRecordZone.ID) async throws -> CKRecordZone = db.recordZone(for:)
        let _: () async throws -> [CKRecordZone] = db.allRecordZones
        let _: (CKRecordZone.ID) async throws -> CKRecordZone.ID = db.deleteRecordZone(withID:)
        let _: (@escaping @Sendable ([CKRecordZone]?, Error?) -> Void) -> Void = db.fetchAllRecordZones(completionHandler:)
        let _: (CKRecordZone.ID, @escaping @Sendable (CKRecordZone?, Error?) -> Void) -> Void = db.fetch(withRecordZoneID:completionHandler:)
        let _: (CKRecordZone.ID, @escaping @Sendable (CKRecordZone.ID?, Error?) -> Void) -> Void = db.delete(withRecordZoneID:completionHandler:)

        let _: (CKSubscription) async throws -> CKSubscription = db.save
        let _: (CKSubscription.ID) async throws -> CKSubscription = db.subscription(for:)
        let _: () async throws -> [CKSubscription] = db.allSubscriptions
        let _: (CKSubscription.ID) async throws -> CKSubscription.ID = db.deleteSubscription(withID:)
        let _: (@escaping @Sendable ([CKSubscription]?, Error?) -> Void) -> Void = db.fetchAllSubscriptions(completionHandler:)
    }

    @Test func recordsAndIDs() {
        let zoneID = CKRecordZone.ID(zoneName: "Z", ownerName: CKCurrentUserDefaultName)
        let id = CKRecord.ID(recordName: "r", zoneID: zoneID)
        let record = CKRecord(recordType: "T", recordID: id)
        let _: CKRecord.RecordType = record.recordType
        #expect(record.recordID === record.recordID && record.recordID === id, "one ID object, as Apple's")
        let _: String? = record.recordChangeTag
        let _: Date? = record.creationDate
        let _: Date? = record.modificationDate
        let _: CKRecord.ID? = record.creatorUserRecordID
        let _: CKRecord.ID? = record.lastModifiedUserRecordID
        let _: [CKRecord.FieldKey] = record.allKeys()
        let _: [CKRecord.FieldKey] = record.changedKeys()
        let _: (NSCoder) -> Void = record.encodeSystemFields(with:)
        let _: CKRecord = CKRecord(recordType: "T", zoneID: zoneID)
        let named = CKRecord.ID(zoneID: zoneID)
        #expect(named.zoneID == zoneID && UUID(uuidString: named.recordName) != nil, "a new UUID name, as Apple's")
        #expect(CKRecord.ID(recordName: "n").zoneID == .default)
        UserDefaults.standard.setValue(true, forKey: "ckfs-api-shape-test")
        #expect(UserDefaults.standard.bool(forKey: "ckfs-api-shape-test"))
        UserDefaults.standard.removeObject(forKey: "ckfs-api-shape-test")
        let _: String = id.recordName
        let _: CKRecordZone.ID = id.zoneID
        let _: String = zoneID.zoneName
        let _: String = zoneID.ownerName
        let _: CKRecordZone.ID = CKRecordZone.ID.default
        let zone = CKRecordZone(zoneName: "Z")
        let _: CKRecordZone.ID = zone.zoneID
        let _: CKRecordZone.Capabilities = zone.capabilities
        let _: CKRecordZone = CKRecordZone.default()
        let vault = CKRecordZone(zoneName: "Z")
        vault.encryptionScope = CKRecordZone.EncryptionScope.perZone
        #expect(CKRecordZone.EncryptionScope.perRecord.rawValue == 0 && vault.encryptionScope.rawValue == 1)
        var iterator: CKRecordKeyValueIterator = record.makeIterator()
        let _: (CKRecord.FieldKey, any CKRecordValueProtocol)? = iterator.next()
        let _: CKRecord.FieldKey = CKRecord.SystemFieldKey.modificationDate
        let _: CKQueryOperation = CKQueryOperation()
        let _: CKQuerySubscription = CKQuerySubscription(recordType: "T", predicate: NSPredicate(value: true))

        let action: CKRecord.ReferenceAction = .deleteSelf
        let reference = CKRecord.Reference(recordID: id, action: action)
        let _: CKRecord.Reference.Action = reference.action
        let _: CKRecord.ID = reference.recordID
        record["owner"] = reference
        let url = URL(fileURLWithPath: "/tmp/x")
        let _: URL? = CKAsset(fileURL: url).fileURL
        let _: NSObject = CKAsset(fileURL: url)
        func archivable<T: NSObject & NSSecureCoding & NSCopying>(_: T.Type) {}
        archivable(CKNotification.ID.self)
        // Apple's classes that are NSObjects with NSSecureCoding and NSCopying.
        archivable(CKQuery.self)
        archivable(CKSubscription.self)
        archivable(CKQuerySubscription.self)
        archivable(CKSubscription.NotificationInfo.self)
        archivable(CKUserIdentity.self)
        archivable(CKUserIdentity.LookupInfo.self)
        // Linux Foundation's NSPredicate and NSSortDescriptor have no secure coding; the ones
        // NSPredicate(format:…) and NSSortDescriptor(key:ascending:) make here do, as Apple's.
        archivable(CloudKitPredicate.self)
        archivable(CloudKitSortDescriptor.self)
        let made: NSPredicate = NSPredicate(format: "rank > 1")
        let sort: NSSortDescriptor = NSSortDescriptor(key: "rank", ascending: true)
        #expect(made is CloudKitPredicate && sort is CloudKitSortDescriptor)
        let _: [CKUserIdentity.LookupInfo] = CKUserIdentity.LookupInfo.lookupInfos(withEmails: ["a@example.com"])
        #expect((record["owner"] as? CKRecord.Reference)?.action == .deleteSelf)
    }

    @Test func operationsAndTheirBlocks() {
        let modify = CKModifyRecordsOperation(recordsToSave: nil, recordIDsToDelete: nil)
        modify.savePolicy = .changedKeys
        // Apple's numbers, as code that stores a policy keeps them.
        #expect(modify.savePolicy.rawValue == 1 && CKModifyRecordsOperation.RecordSavePolicy(rawValue: 2) == .allKeys
                && CKModifyRecordsOperation.RecordSavePolicy.ifServerRecordUnchanged.rawValue == 0)
        modify.isAtomic = false
        modify.perRecordSaveBlock = { (_: CKRecord.ID, _: Result<CKRecord, Error>) in }
        modify.perRecordDeleteBlock = { (_: CKRecord.ID, _: Result<Void, Error>) in }
        modify.modifyRecordsResultBlock = { (_: Result<Void, Error>) in }
        modify.modifyRecordsCompletionBlock = { (_: [CKRecord]?, _: [CKRecord.ID]?, _: Error?) in }
        modify.perRecordProgressBlock = { (_: CKRecord, _: Double) in }
        let _: Data? = modify.clientChangeTokenData

        let fetch = CKFetchRecordsOperation(recordIDs: [])
        fetch.perRecordResultBlock = { (_: CKRecord.ID, _: Result<CKRecord, Error>) in }
        fetch.fetchRecordsResultBlock = { (_: Result<Void, Error>) in }
        let _: CKFetchRecordsOperation = CKFetchRecordsOperation.fetchCurrentUserRecordOperation()

        let query = CKQueryOperation(query: CKQuery(recordType: "T", predicate: NSPredicate(value: true)))
        query.recordMatchedBlock = { (_: CKRecord.ID, _: Result<CKRecord, Error>) in }
        query.queryResultBlock = { (_: Result<CKQueryOperation.Cursor?, Error>) in }
        query.resultsLimit = CKQueryOperation.maximumResults
        let _: [CKRecord.FieldKey]? = query.desiredKeys

        let zones = CKFetchRecordZoneChangesOperation(recordZoneIDs: [], configurationsByRecordZoneID: [:])
        zones.recordWasChangedBlock = { (_: CKRecord.ID, _: Result<CKRecord, Error>) in }
        zones.recordWithIDWasDeletedBlock = { (_: CKRecord.ID, _: CKRecord.RecordType) in }
        zones.recordZoneChangeTokensUpdatedBlock = { (_: CKRecordZone.ID, _: CKServerChangeToken?, _: Data?) in }
        zones.recordZoneFetchResultBlock = { (_: CKRecordZone.ID, _: Result<(serverChangeToken: CKServerChangeToken, clientChangeTokenData: Data?, moreComing: Bool), Error>) in }
        zones.fetchRecordZoneChangesResultBlock = { (_: Result<Void, Error>) in }
        zones.fetchAllChanges = true
        let configuration = CKFetchRecordZoneChangesOperation.ZoneConfiguration()
        // Apple's initializer takes an optional limit.
        let _ = CKFetchRecordZoneChangesOperation.ZoneConfiguration(previousServerChangeToken: nil, resultsLimit: nil, desiredKeys: nil)
        func archivable<T: NSObject & NSSecureCoding>(_: T.Type) {}
        archivable(CKFetchRecordZoneChangesOperation.ZoneConfiguration.self)
        archivable(CKOperationGroup.self)
        let _: NSObject = CKOperation.Configuration()
        configuration.previousServerChangeToken = nil
        configuration.resultsLimit = 10
        configuration.desiredKeys = ["a"]

        let changes = CKFetchDatabaseChangesOperation(previousServerChangeToken: nil)
        changes.recordZoneWithIDChangedBlock = { (_: CKRecordZone.ID) in }
        changes.recordZoneWithIDWasDeletedBlock = { (_: CKRecordZone.ID) in }
        changes.recordZoneWithIDWasPurgedBlock = { (_: CKRecordZone.ID) in }
        changes.changeTokenUpdatedBlock = { (_: CKServerChangeToken) in }
        changes.fetchDatabaseChangesResultBlock = { (_: Result<(serverChangeToken: CKServerChangeToken, moreComing: Bool), Error>) in }

        let modifyZones = CKModifyRecordZonesOperation(recordZonesToSave: nil, recordZoneIDsToDelete: nil)
        modifyZones.perRecordZoneSaveBlock = { (_: CKRecordZone.ID, _: Result<CKRecordZone, Error>) in }
        modifyZones.perRecordZoneDeleteBlock = { (_: CKRecordZone.ID, _: Result<Void, Error>) in }
        modifyZones.modifyRecordZonesResultBlock = { (_: Result<Void, Error>) in }

        let subscriptions = CKModifySubscriptionsOperation(subscriptionsToSave: nil, subscriptionIDsToDelete: nil)
        subscriptions.perSubscriptionSaveBlock = { (_: CKSubscription.ID, _: Result<CKSubscription, Error>) in }
        subscriptions.perSubscriptionDeleteBlock = { (_: CKSubscription.ID, _: Result<Void, Error>) in }
        subscriptions.modifySubscriptionsResultBlock = { (_: Result<Void, Error>) in }

        let subscription = CKQuerySubscription(recordType: "T", predicate: NSPredicate(value: true), subscriptionID: "s",
                                               options: [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion])
        let info = CKSubscription.NotificationInfo()
        info.shouldSendContentAvailable = true
        info.desiredKeys = ["a"]
        subscription.notificationInfo = info
        let _: CKSubscription.SubscriptionType = subscription.subscriptionType
        let _: CKSubscription.ID = subscription.subscriptionID
        let _: CKDatabaseSubscription = CKDatabaseSubscription(subscriptionID: "d")
        let zoneSubscription = CKRecordZoneSubscription(zoneID: CKRecordZone.ID(zoneName: "Work"), subscriptionID: "z")
        // As Apple declares them: a zone subscription's zone is not optional; a query
        // subscription's is, and may be set.
        let watched: CKRecordZone.ID = zoneSubscription.zoneID
        #expect(watched.zoneName == "Work")
        let everyZone: CKRecordZone.ID? = subscription.zoneID
        #expect(everyZone == nil)
        subscription.zoneID = watched
        #expect(subscription.zoneID == watched)
        final class AppFetchSubscriptions: CKFetchSubscriptionsOperation, @unchecked Sendable {}
        let _: AppFetchSubscriptions = AppFetchSubscriptions.fetchAllSubscriptionsOperation()
        final class AppConfiguration: CKOperation.Configuration, @unchecked Sendable {}
        let _: CKOperation.Configuration = AppConfiguration()
        let discover = CKDiscoverUserIdentitiesOperation()
        discover.userIdentityLookupInfos = [CKUserIdentity.LookupInfo(emailAddress: "a@example.com")]
        discover.discoverUserIdentitiesResultBlock = { (_: Result<Void, Error>) in }
        CKDiscoverAllUserIdentitiesOperation().discoverAllUserIdentitiesResultBlock = { (_: Result<Void, Error>) in }
        func describable<T: CustomStringConvertible>(_: T.Type) {}
        describable(CKSyncEngine.Event.FetchedRecordZoneChanges.self)
        describable(CKSyncEngine.Event.SentRecordZoneChanges.FailedRecordSave.self)
        describable(CKSyncEngine.Event.DidSendChanges.self)
        func secure<T: NSObject & NSSecureCoding>(_: T.Type) {}
        secure(CKShare.Participant.self)
        secure(CKShare.Metadata.self)
        secure(CKShare.AccessRequester.self)
        secure(CKShare.BlockedIdentity.self)
        // Access requests (iOS 26) and one-time URLs (iOS 18), as Apple declares them.
        let _: ([URL]) async throws -> [URL: Result<Void, any Error>] = CKContainer.default().requestShareAccess(for:)
        let request = CKShareRequestAccessOperation(shareURLs: [])
        request.shareURLs = nil as [URL]?
        request.perShareAccessRequestResultBlock = { (_: URL, _: Result<Void, any Error>) in }
        request.shareAccessRequestResultBlock = { (_: Result<Void, any Error>) in }
        let _: CKOperation = CKShareRequestAccessOperation()
        let share = CKShare(rootRecord: CKRecord(recordType: "T"))
        share.allowsAccessRequests = true
        let _: [CKShare.AccessRequester] = share.requesters
        let _: [CKShare.BlockedIdentity] = share.blockedIdentities
        let _: ([CKShare.AccessRequester]) -> Void = share.denyRequesters
        let _: ([CKShare.AccessRequester]) -> Void = share.blockRequesters
        let _: ([CKShare.BlockedIdentity]) -> Void = share.unblockIdentities
        let _: (CKShare.Participant.ID) -> URL? = share.oneTimeURL(for:)
        let _: (CKShare.AccessRequester) -> CKUserIdentity.LookupInfo = { $0.participantLookupInfo }
        let _: (CKShare.AccessRequester) -> CKUserIdentity = { $0.userIdentity }
        let _: (CKShare.BlockedIdentity) -> CKUserIdentity = { $0.userIdentity }
        let oneTime: CKShare.Participant = CKShare.Participant.oneTimeURLParticipant()
        let _: Bool = oneTime.isApprovedRequester
        let _: Date? = oneTime.dateAddedToShare
        let _: (CKNotification) -> CKRecord.ID? = { $0.subscriptionOwnerUserRecordID }
        let notifications = CKFetchNotificationChangesOperation(previousServerChangeToken: nil as CKServerChangeToken?)
        notifications.fetchNotificationChangesCompletionBlock = { (_: CKServerChangeToken?, _: Error?) in }
        notifications.notificationChangedBlock = { (_: CKNotification) in }
        let _: CKServerChangeToken? = notifications.previousServerChangeToken
        #expect(modify.savePolicy == .changedKeys && !modify.isAtomic && zones.fetchAllChanges)
    }

    @Test func errors() {
        let error = CKError(.partialFailure)
        let _: CKError.Code = error.code
        let _: [AnyHashable: Error]? = error.partialErrorsByItemID
        let _: CKRecord? = error.serverRecord
        let _: CKRecord? = error.clientRecord
        let _: CKRecord? = error.ancestorRecord
        let _: Double? = error.retryAfterSeconds
        #expect(CKError.Code.partialFailure.rawValue == 2 && CKError.Code.serverRecordChanged.rawValue == 14 && CKError.Code.zoneNotFound.rawValue == 26)
        #expect(CKErrorDomain == "CKErrorDomain")
    }
    /// The two conveniences added for their shapes also do what Apple's do.
    @Test func theCurrentUsersRecordAndAQueryWithAResult() async throws {
        let container = try ImportCloudKitTests.container()
        let operation = CKFetchRecordsOperation.fetchCurrentUserRecordOperation()
        let user: CKRecord = try await withCheckedThrowingContinuation { c in
            operation.perRecordResultBlock = { _, result in c.resume(with: result) }
            container.add(operation)
        }
        let me = try await container.userRecordID()
        #expect(user.recordType == CKRecordTypeUserRecord && user.recordType == CKRecord.SystemType.userRecord && user.recordID == me)
        #expect(CKRecord.SystemType.share == CKRecordTypeShare)
        // Observing account changes compiles and is harmless: an identity never changes here.
        let observer = NotificationCenter.default.addObserver(forName: .CKAccountChanged, object: nil, queue: nil) { _ in }
        NotificationCenter.default.removeObserver(observer)

        let db = container.privateCloudDatabase
        for (i, name) in ["a", "b", "c"].enumerated() {
            let item = CKRecord(recordType: "Item", recordID: CKRecord.ID(recordName: name))
            item["rank"] = i
            _ = try await db.save(item)
        }
        let query = CKQuery(recordType: "Item", predicate: NSPredicate(value: true))
        query.sortDescriptors = [NSSortDescriptor(key: "rank", ascending: false)]
        let page = try await withCheckedThrowingContinuation { c in
            db.fetch(withQuery: query, resultsLimit: 2) { c.resume(with: $0) }
        }
        #expect(page.matchResults.map(\.0.recordName) == ["c", "b"] && page.queryCursor != nil)
    }
}
