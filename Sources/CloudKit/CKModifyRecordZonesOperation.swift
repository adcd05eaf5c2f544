import Foundation
import CloudStore

/// Saves and deletes zones: what sync code runs first, to make its zone if it is not there.
/// `@unchecked Sendable` as every operation: inputs and blocks are set before it starts and
/// only read while it runs (Apple's contract); its running state is under ``CKOperation``'s lock.
open class CKModifyRecordZonesOperation: CKDatabaseOperation, @unchecked Sendable {
    public var recordZonesToSave: [CKRecordZone]?
    public var recordZoneIDsToDelete: [CKRecordZone.ID]?
    public var perRecordZoneSaveBlock: ((CKRecordZone.ID, Result<CKRecordZone, any Error>) -> Void)?
    public var perRecordZoneDeleteBlock: ((CKRecordZone.ID, Result<Void, any Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var modifyRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older form of ``modifyRecordZonesResultBlock``.
    public var modifyRecordZonesCompletionBlock: (([CKRecordZone]?, [CKRecordZone.ID]?, (any Error)?) -> Void)?

    public init(recordZonesToSave: [CKRecordZone]? = nil, recordZoneIDsToDelete: [CKRecordZone.ID]? = nil) {
        self.recordZonesToSave = recordZonesToSave
        self.recordZoneIDsToDelete = recordZoneIDsToDelete
        super.init()
    }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled; no zone was saved or deleted") }
            let db = try targetDatabase.engine()
            let (saves, deletes) = CKDatabase.modifyZones(db, saving: recordZonesToSave ?? [], deleting: recordZoneIDsToDelete ?? [])
            var failures: [CKItemID: CKError] = [:]
            var saved: [CKRecordZone] = []
            for zone in recordZonesToSave ?? [] {
                guard let result = saves[zone.zoneID] else { continue }
                perRecordZoneSaveBlock?(zone.zoneID, result)
                switch result {
                case .success(let z): saved.append(z)
                case .failure(let e): failures[.zone(zone.zoneID.engine)] = e as? CKError
                }
            }
            var deleted: [CKRecordZone.ID] = []
            for id in recordZoneIDsToDelete ?? [] {
                guard let result = deletes[id] else { continue }
                perRecordZoneDeleteBlock?(id, result)
                switch result {
                case .success: deleted.append(id)
                case .failure(let e): failures[.zone(id.engine)] = e as? CKError
                }
            }
            let error = CKError.partialFailure(failures, "\(failures.count) zones could not be saved or deleted")
            // As Apple's result blocks: each zone's error went to its own block.
            modifyRecordZonesResultBlock?(.success(()))
            modifyRecordZonesCompletionBlock?(saved, deleted, error)
        } catch {
            modifyRecordZonesResultBlock?(.failure(error))
            modifyRecordZonesCompletionBlock?(nil, nil, error)
        }
    }
}
