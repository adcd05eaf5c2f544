import Foundation

extension CKSyncEngine {
    /// What the engine tells its delegate, one event at a time.
    public enum Event: Sendable, CustomStringConvertible {
        case stateUpdate(StateUpdate)
        case accountChange(AccountChange)
        case fetchedDatabaseChanges(FetchedDatabaseChanges)
        case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
        case sentDatabaseChanges(SentDatabaseChanges)
        case sentRecordZoneChanges(SentRecordZoneChanges)
        case willFetchChanges(WillFetchChanges)
        case willFetchRecordZoneChanges(WillFetchRecordZoneChanges)
        case didFetchRecordZoneChanges(DidFetchRecordZoneChanges)
        case didFetchChanges(DidFetchChanges)
        case willSendChanges(WillSendChanges)
        case didSendChanges(DidSendChanges)

        public var description: String {
            switch self {
            case .stateUpdate: "stateUpdate"
            case .accountChange(let e): "accountChange(\(e.changeType))"
            case .fetchedDatabaseChanges(let e): "fetchedDatabaseChanges(\(e.modifications.count) modified, \(e.deletions.count) deleted)"
            case .fetchedRecordZoneChanges(let e): "fetchedRecordZoneChanges(\(e.modifications.count) modified, \(e.deletions.count) deleted)"
            case .sentDatabaseChanges(let e): "sentDatabaseChanges(\(e.savedZones.count) saved, \(e.deletedZoneIDs.count) deleted, \(e.failedZoneSaves.count + e.failedZoneDeletes.count) failed)"
            case .sentRecordZoneChanges(let e): "sentRecordZoneChanges(\(e.savedRecords.count) saved, \(e.deletedRecordIDs.count) deleted, \(e.failedRecordSaves.count + e.failedRecordDeletes.count) failed)"
            case .willFetchChanges: "willFetchChanges"
            case .willFetchRecordZoneChanges(let e): "willFetchRecordZoneChanges(\(e.zoneID.zoneName))"
            case .didFetchRecordZoneChanges(let e): "didFetchRecordZoneChanges(\(e.zoneID.zoneName)\(e.error.map { ", \($0.code)" } ?? ""))"
            case .didFetchChanges: "didFetchChanges"
            case .willSendChanges: "willSendChanges"
            case .didSendChanges: "didSendChanges"
            }
        }
    }
}

extension CKSyncEngine.Event {
    /// The state to keep, for the next engine's `Configuration`.
    public struct StateUpdate: Sendable {
        public let stateSerialization: CKSyncEngine.State.Serialization
    }

    public struct AccountChange: Sendable {
        public enum ChangeType: Sendable, Equatable {
            case signIn(currentUser: CKRecord.ID)
            case signOut(previousUser: CKRecord.ID)
            case switchAccounts(previousUser: CKRecord.ID, currentUser: CKRecord.ID)
        }

        public let changeType: ChangeType
    }

    public struct FetchedDatabaseChanges: Sendable {
        public let modifications: [CKDatabase.DatabaseChange.Modification]
        public let deletions: [CKDatabase.DatabaseChange.Deletion]
    }

    public struct FetchedRecordZoneChanges: Sendable {
        public let modifications: [CKDatabase.RecordZoneChange.Modification]
        public let deletions: [CKDatabase.RecordZoneChange.Deletion]
    }

    public struct SentDatabaseChanges: Sendable {
        public struct FailedZoneSave: Sendable {
            public let zone: CKRecordZone
            public let error: CKError
        }

        public let savedZones: [CKRecordZone]
        public let failedZoneSaves: [FailedZoneSave]
        public let deletedZoneIDs: [CKRecordZone.ID]
        public let failedZoneDeletes: [CKRecordZone.ID: CKError]
    }

    public struct SentRecordZoneChanges: Sendable {
        public struct FailedRecordSave: Sendable {
            public let record: CKRecord
            public let error: CKError
        }

        public let savedRecords: [CKRecord]
        public let failedRecordSaves: [FailedRecordSave]
        public let deletedRecordIDs: [CKRecord.ID]
        public let failedRecordDeletes: [CKRecord.ID: CKError]
    }

    public struct WillFetchChanges: Sendable {
        public let context: CKSyncEngine.FetchChangesContext
    }

    public struct WillFetchRecordZoneChanges: Sendable {
        public let zoneID: CKRecordZone.ID
    }

    public struct DidFetchRecordZoneChanges: Sendable {
        public let zoneID: CKRecordZone.ID
        public let error: CKError?
    }

    public struct DidFetchChanges: Sendable {
        public let context: CKSyncEngine.FetchChangesContext
    }

    public struct WillSendChanges: Sendable {
        public let context: CKSyncEngine.SendChangesContext
    }

    public struct DidSendChanges: Sendable {
        public let context: CKSyncEngine.SendChangesContext
    }
}
