import Foundation
import CloudStore

extension CKDatabase {
    /// What changed in a zone, as CloudKit's async API gives it.
    public enum RecordZoneChange {
        /// A record saved since the token, as it is now.
        public struct Modification: Sendable, Hashable {
            public let record: CKRecord
        }

        /// A record deleted since the token.
        public struct Deletion: Sendable, Hashable {
            public let recordID: CKRecord.ID
            /// The deleted record's type; empty for a deletion logged before ckfs kept types.
            public let recordType: CKRecord.RecordType
        }
    }

    /// Which zones of a database changed, as CloudKit's async API gives it.
    public enum DatabaseChange {
        public struct Modification: Sendable, Hashable {
            public let zoneID: CKRecordZone.ID
        }

        public struct Deletion: Sendable, Hashable {
            /// Why a zone is gone: a local store's zones are only ever `deleted`.
            public enum Reason: Sendable, Hashable {
                /// Deleted by an app.
                case deleted
                /// Deleted by the user from iCloud's storage settings.
                case purged
                /// Deleted when the user reset their encrypted data.
                case encryptedDataReset
            }

            public let zoneID: CKRecordZone.ID
            public let reason: Reason
            /// Whether the zone was purged (Apple's older spelling of `reason == .purged`).
            public var purged: Bool { reason == .purged }
        }
    }

    /// One page of what changed in `zoneID` since `changeToken` (nil: every record), at most
    /// `resultsLimit` records; fetch again with the answer's token while `moreComing`.
    public func recordZoneChanges(inZoneWith zoneID: CKRecordZone.ID, since changeToken: CKServerChangeToken?,
                                  desiredKeys: [CKRecord.FieldKey]? = nil, resultsLimit: Int? = nil) async throws
        -> (modificationResultsByID: [CKRecord.ID: Result<RecordZoneChange.Modification, any Error>],
            deletions: [RecordZoneChange.Deletion], changeToken: CKServerChangeToken, moreComing: Bool) {
        let db = try engine(zone: zoneID)
        let c = try db.changes(in: zoneID.zoneName, since: try Self.zoneToken(changeToken), limit: resultsLimit.flatMap { $0 > 0 ? $0 : nil },
                               desiredKeys: desiredKeys)
        var modifications: [CKRecord.ID: Result<RecordZoneChange.Modification, any Error>] = [:]
        for record in c.changed {
            let id = CKRecord.ID(recordName: record.recordID.recordName, zoneID: zoneID)
            modifications[id] = .success(RecordZoneChange.Modification(record: wrap(record, db)))
        }
        let deletions = c.deleted.map {
            RecordZoneChange.Deletion(recordID: CKRecord.ID(recordName: $0.recordName, zoneID: zoneID), recordType: c.deletedRecordTypes[$0.recordName] ?? "")
        }
        return (modifications, deletions, CKServerChangeToken(zone: c.token), c.moreComing)
    }

    /// One page of the zones that changed in this database since `changeToken` (nil: every
    /// zone); fetch again with the answer's token while `moreComing`.
    public func databaseChanges(since changeToken: CKServerChangeToken?, resultsLimit: Int? = nil) async throws
        -> (modifications: [DatabaseChange.Modification], deletions: [DatabaseChange.Deletion], changeToken: CKServerChangeToken, moreComing: Bool) {
        let c = try databaseChanges(since: try Self.databaseToken(changeToken), limit: resultsLimit.flatMap { $0 > 0 ? $0 : nil })
        return (c.changed.map { DatabaseChange.Modification(zoneID: presented($0)) },
                c.deleted.map { DatabaseChange.Deletion(zoneID: presented($0), reason: .deleted) },
                CKServerChangeToken(database: c.token), c.moreComing)
    }

    /// The zone token a `CKServerChangeToken` holds; a database token is refused.
    static func zoneToken(_ token: CKServerChangeToken?) throws(CKError) -> ChangeToken? {
        guard let token else { return nil }
        guard let zone = token.zoneToken else {
            throw CKError(.invalidArguments, "\(token) is a database's change token; a zone's fetch takes the token its own last fetch gave")
        }
        return zone
    }

    /// The database token a `CKServerChangeToken` holds; a zone token is refused.
    static func databaseToken(_ token: CKServerChangeToken?) throws(CKError) -> DatabaseChangeToken? {
        guard let token else { return nil }
        guard let database = token.databaseToken else {
            throw CKError(.invalidArguments, "\(token) is a zone's change token; a database's fetch takes the token its own last fetch gave")
        }
        return database
    }
}
