import Foundation
import CloudStore

/// What the CloudKit classes need of a database to save, fetch and present records: a
/// ``Database`` (one owner's zones) or a ``SharedDatabase`` (the zones of every owner who
/// shares with the caller), so that one operation class serves every scope.
protocol RecordAccess: Sendable {
    func normalized(_ id: RecordID) -> RecordID
    func modify(saving: [Record], deleting: [RecordID], options: ModifyOptions,
                progress: ((RecordID, Double) -> Void)?, isCancelled: (() -> Bool)?) throws(CKError) -> ModifyResult
    func fetch(_ ids: [RecordID], desiredKeys: [String]?) -> [(RecordID, Result<Record, CKError>)]
    /// The local folder where the assets of a record of this database are files named by
    /// their checksums; empty when the record's zone cannot be read.
    func assetDirectory(of record: Record) -> String
    /// Whether records keep their owner's name (a shared database), rather than the caller's
    /// `CKCurrentUserDefaultName`.
    var namesOwners: Bool { get }
    /// The user the records are presented to.
    var userRecordName: String { get }
    var containerIdentifier: String { get }
}

extension Database: RecordAccess {
    func assetDirectory(of record: Record) -> String { (try? assetFolder(of: record)) ?? "" }
    var namesOwners: Bool { scope == .shared }
    var containerIdentifier: String { container.identifier }
}

extension SharedDatabase: RecordAccess {
    func normalized(_ id: RecordID) -> RecordID { id }

    func modify(saving: [Record], deleting: [RecordID], options: ModifyOptions,
                progress: ((RecordID, Double) -> Void)?, isCancelled: (() -> Bool)?) throws(CKError) -> ModifyResult {
        if isCancelled?() == true {
            let e = CKError(.operationCancelled, "the operation was cancelled before anything was saved")
            return ModifyResult(saveResults: saving.map { ($0.recordID, .failure(e)) }, deleteResults: deleting.map { ($0, .failure(e)) })
        }
        let result = try modify(saving: saving, deleting: deleting, options: options)
        for (id, r) in result.saveResults { if case .success = r { progress?(id, 1) } }
        return result
    }

    func assetDirectory(of record: Record) -> String {
        let zone = record.recordID.zoneID
        return (try? database(owner: zone.ownerName).assetFolder(of: record)) ?? ""
    }

    var namesOwners: Bool { true }
    var containerIdentifier: String { container.identifier }
}

extension RecordAccess {
    /// Saves one record with the default policy; throws its error.
    func saveRecord(_ record: Record) throws(CKError) -> Record {
        try modify(saving: [record], deleting: [], options: ModifyOptions(), progress: nil, isCancelled: nil).saveResults[0].1.get()
    }

    /// Fetches one record; throws `unknownItem` when there is none.
    func record(for id: RecordID) throws(CKError) -> Record {
        try fetch([id], desiredKeys: nil)[0].1.get()
    }

    func modify(saving: [Record], deleting: [RecordID], options: ModifyOptions) throws(CKError) -> ModifyResult {
        try modify(saving: saving, deleting: deleting, options: options, progress: nil, isCancelled: nil)
    }
}
