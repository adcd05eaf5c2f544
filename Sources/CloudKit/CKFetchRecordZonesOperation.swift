import Foundation
import CloudStore

/// Fetches zones by ID, or every zone of the database.
/// `@unchecked Sendable` as every operation: inputs and blocks are set before it starts and
/// only read while it runs (Apple's contract); its running state is under ``CKOperation``'s lock.
open class CKFetchRecordZonesOperation: CKDatabaseOperation, @unchecked Sendable {
    /// The zones to fetch; nil fetches every zone.
    public var recordZoneIDs: [CKRecordZone.ID]?
    public var perRecordZoneResultBlock: ((CKRecordZone.ID, Result<CKRecordZone, any Error>) -> Void)?
    /// The end of the operation: a failure only when the whole operation failed.
    public var fetchRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older form of ``fetchRecordZonesResultBlock``.
    public var fetchRecordZonesCompletionBlock: (([CKRecordZone.ID: CKRecordZone]?, (any Error)?) -> Void)?

    public required init(recordZoneIDs: [CKRecordZone.ID]? = nil) {
        self.recordZoneIDs = recordZoneIDs
        super.init()
    }

    /// An operation that fetches every zone of the database.
    open class func fetchAllRecordZonesOperation() -> Self { Self(recordZoneIDs: nil) }

    open override func main() {
        do throws(CKError) {
            if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
            let database = targetDatabase
            var found: [CKRecordZone.ID: CKRecordZone] = [:]
            var failures: [CKItemID: CKError] = [:]
            if let ids = recordZoneIDs {
                for id in ids {
                    do throws(CKError) {
                        let zone = CKRecordZone(try database.engine(zone: id).zone(id.zoneName, includingShare: true), as: id)
                        found[id] = zone
                        perRecordZoneResultBlock?(id, .success(zone))
                    } catch {
                        failures[.zone(id.engine)] = error
                        perRecordZoneResultBlock?(id, .failure(error))
                    }
                }
            } else {
                for zone in try database.zones() {
                    found[zone.zoneID] = zone
                    perRecordZoneResultBlock?(zone.zoneID, .success(zone))
                }
            }
            let error = CKError.partialFailure(failures, "\(failures.count) of \(recordZoneIDs?.count ?? 0) zones could not be fetched")
            // As Apple's result blocks: each zone's error went to its own block.
            fetchRecordZonesResultBlock?(.success(()))
            fetchRecordZonesCompletionBlock?(found, error)
        } catch {
            fetchRecordZonesResultBlock?(.failure(error))
            fetchRecordZonesCompletionBlock?(nil, error)
        }
    }
}
