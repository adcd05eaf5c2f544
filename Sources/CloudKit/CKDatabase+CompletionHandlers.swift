import Foundation
import CloudStore

/// The completion-handler forms of the database's batch calls, as Apple's: each runs the async
/// form and hands its result to the handler, on another thread.
extension CKDatabase {
    /// Runs `work` and calls `handler` with what it returned or threw.
    private func complete<T: Sendable>(_ handler: @escaping @Sendable (Result<T, Error>) -> Void,
                                       _ work: @escaping @Sendable () async throws -> T) {
        Task {
            do { handler(.success(try await work())) } catch { handler(.failure(error)) }
        }
    }

    // MARK: Records

    public func fetch(withRecordIDs recordIDs: [CKRecord.ID], desiredKeys: [CKRecord.FieldKey]? = nil,
                      completionHandler: @escaping @Sendable (Result<[CKRecord.ID: Result<CKRecord, Error>], Error>) -> Void) {
        complete(completionHandler) { try await self.records(for: recordIDs, desiredKeys: desiredKeys) }
    }

    public func modifyRecords(saving recordsToSave: [CKRecord], deleting recordIDsToDelete: [CKRecord.ID],
                              savePolicy: CKModifyRecordsOperation.RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true,
                              completionHandler: @escaping @Sendable (Result<(saveResults: [CKRecord.ID: Result<CKRecord, Error>],
                                                                             deleteResults: [CKRecord.ID: Result<Void, Error>]), Error>) -> Void) {
        complete(completionHandler) {
            try await self.modifyRecords(saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
        }
    }

    public func fetch(withCursor queryCursor: CKQueryOperation.Cursor, desiredKeys: [CKRecord.FieldKey]? = nil,
                      resultsLimit: Int = CKQueryOperation.maximumResults,
                      completionHandler: @escaping @Sendable (Result<(matchResults: [(CKRecord.ID, Result<CKRecord, Error>)],
                                                                     queryCursor: CKQueryOperation.Cursor?), Error>) -> Void) {
        complete(completionHandler) { try await self.records(continuingMatchFrom: queryCursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit) }
    }

    // MARK: Zones

    public func fetch(withRecordZoneIDs zoneIDs: [CKRecordZone.ID],
                      completionHandler: @escaping @Sendable (Result<[CKRecordZone.ID: Result<CKRecordZone, Error>], Error>) -> Void) {
        complete(completionHandler) { try await self.recordZones(for: zoneIDs) }
    }

    public func modifyRecordZones(saving recordZonesToSave: [CKRecordZone], deleting recordZoneIDsToDelete: [CKRecordZone.ID],
                                  completionHandler: @escaping @Sendable (Result<(saveResults: [CKRecordZone.ID: Result<CKRecordZone, Error>],
                                                                                 deleteResults: [CKRecordZone.ID: Result<Void, Error>]), Error>) -> Void) {
        complete(completionHandler) { try await self.modifyRecordZones(saving: recordZonesToSave, deleting: recordZoneIDsToDelete) }
    }

    // MARK: Subscriptions

    /// The subscriptions `ids` name, each found or why not.
    public func subscriptions(for ids: [CKSubscription.ID]) async throws -> [CKSubscription.ID: Result<CKSubscription, Error>] {
        var out: [CKSubscription.ID: Result<CKSubscription, Error>] = [:]
        for id in ids {
            do { out[id] = .success(try await subscription(for: id)) } catch { out[id] = .failure(error) }
        }
        return out
    }

    public func fetch(withSubscriptionIDs subscriptionIDs: [CKSubscription.ID],
                      completionHandler: @escaping @Sendable (Result<[CKSubscription.ID: Result<CKSubscription, Error>], Error>) -> Void) {
        complete(completionHandler) { try await self.subscriptions(for: subscriptionIDs) }
    }

    public func modifySubscriptions(saving subscriptionsToSave: [CKSubscription], deleting subscriptionIDsToDelete: [CKSubscription.ID],
                                    completionHandler: @escaping @Sendable (Result<(saveResults: [CKSubscription.ID: Result<CKSubscription, Error>],
                                                                                   deleteResults: [CKSubscription.ID: Result<Void, Error>]), Error>) -> Void) {
        complete(completionHandler) { try await self.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete) }
    }

    // MARK: Changes

    public func fetchDatabaseChanges(since changeToken: CKServerChangeToken?, resultsLimit: Int? = nil,
                                     completionHandler: @escaping @Sendable (Result<(modifications: [DatabaseChange.Modification],
                                                                                    deletions: [DatabaseChange.Deletion],
                                                                                    changeToken: CKServerChangeToken, moreComing: Bool), Error>) -> Void) {
        complete(completionHandler) { try await self.databaseChanges(since: changeToken, resultsLimit: resultsLimit) }
    }

    public func fetchRecordZoneChanges(inZoneWith zoneID: CKRecordZone.ID, since changeToken: CKServerChangeToken?,
                                       desiredKeys: [CKRecord.FieldKey]? = nil, resultsLimit: Int? = nil,
                                       completionHandler: @escaping @Sendable (Result<(modificationResultsByID: [CKRecord.ID: Result<RecordZoneChange.Modification, Error>],
                                                                                      deletions: [RecordZoneChange.Deletion],
                                                                                      changeToken: CKServerChangeToken, moreComing: Bool), Error>) -> Void) {
        complete(completionHandler) {
            try await self.recordZoneChanges(inZoneWith: zoneID, since: changeToken, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
    }

    // MARK: Configuration

    /// Runs `body` with this database, as Apple's does with a configuration and group applied
    /// to the calls it makes: here every call runs locally, so they change nothing.
    @discardableResult
    public func configuredWith<R>(configuration: CKOperation.Configuration? = nil, group: CKOperationGroup? = nil,
                                  body: (CKDatabase) async throws -> R) async rethrows -> R {
        try await body(self)
    }

    @discardableResult
    public func configuredWith<R>(configuration: CKOperation.Configuration? = nil, group: CKOperationGroup? = nil,
                                  body: (CKDatabase) throws -> R) rethrows -> R {
        try body(self)
    }
}
