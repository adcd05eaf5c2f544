import Foundation
import CloudStore

/// Which zones of a database changed since a token: the first half of a sync loop, before
/// ``CKFetchRecordZoneChangesOperation`` fetches the records of the zones it names.
/// `@unchecked Sendable` as every operation: inputs and blocks are set before it starts and
/// only read while it runs (Apple's contract); its running state is under ``CKOperation``'s lock.
open class CKFetchDatabaseChangesOperation: CKDatabaseOperation, @unchecked Sendable {
    public var previousServerChangeToken: CKServerChangeToken?
    /// At most this many zones a page (0: no limit).
    public var resultsLimit: Int = 0
    /// Fetch page after page until nothing more is left (the default), or stop after one.
    public var fetchAllChanges = true

    public var recordZoneWithIDChangedBlock: ((CKRecordZone.ID) -> Void)?
    public var recordZoneWithIDWasDeletedBlock: ((CKRecordZone.ID) -> Void)?
    /// A local store never purges a zone; kept for code that sets it.
    public var recordZoneWithIDWasPurgedBlock: ((CKRecordZone.ID) -> Void)?
    /// A local store has no encrypted data to reset; kept for code that sets it.
    public var recordZoneWithIDWasDeletedDueToUserEncryptedDataResetBlock: ((CKRecordZone.ID) -> Void)?
    /// The token after each page but the last.
    public var changeTokenUpdatedBlock: ((CKServerChangeToken) -> Void)?
    public var fetchDatabaseChangesResultBlock: ((Result<(serverChangeToken: CKServerChangeToken, moreComing: Bool), any Error>) -> Void)?
    /// The older form of ``fetchDatabaseChangesResultBlock``.
    public var fetchDatabaseChangesCompletionBlock: ((CKServerChangeToken?, Bool, (any Error)?) -> Void)?

    public init(previousServerChangeToken: CKServerChangeToken? = nil) {
        self.previousServerChangeToken = previousServerChangeToken
        super.init()
    }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
            let database = targetDatabase
            var token = try CKDatabase.databaseToken(previousServerChangeToken)
            while true {
                let page = try database.databaseChanges(since: token, limit: resultsLimit > 0 ? resultsLimit : nil)
                for zone in page.changed { recordZoneWithIDChangedBlock?(database.presented(zone)) }
                for zone in page.deleted { recordZoneWithIDWasDeletedBlock?(database.presented(zone)) }
                token = page.token
                let next = CKServerChangeToken(database: page.token)
                guard page.moreComing, fetchAllChanges, !isCancelled else {
                    fetchDatabaseChangesResultBlock?(.success((next, page.moreComing)))
                    fetchDatabaseChangesCompletionBlock?(next, page.moreComing, nil)
                    return
                }
                changeTokenUpdatedBlock?(next)
            }
        } catch {
            fetchDatabaseChangesResultBlock?(.failure(error))
            fetchDatabaseChangesCompletionBlock?(nil, false, error)
        }
    }
}
