import Foundation
import CloudStore

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
            case .stateUpdate(let e): "stateUpdate(\(e))"
            case .accountChange(let e): "accountChange(\(e))"
            case .fetchedDatabaseChanges(let e): "fetchedDatabaseChanges(\(e))"
            case .fetchedRecordZoneChanges(let e): "fetchedRecordZoneChanges(\(e))"
            case .sentDatabaseChanges(let e): "sentDatabaseChanges(\(e))"
            case .sentRecordZoneChanges(let e): "sentRecordZoneChanges(\(e))"
            case .willFetchChanges(let e): "willFetchChanges(\(e))"
            case .willFetchRecordZoneChanges(let e): "willFetchRecordZoneChanges(\(e))"
            case .didFetchRecordZoneChanges(let e): "didFetchRecordZoneChanges(\(e))"
            case .didFetchChanges(let e): "didFetchChanges(\(e))"
            case .willSendChanges(let e): "willSendChanges(\(e))"
            case .didSendChanges(let e): "didSendChanges(\(e))"
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

// Each payload describes itself, as Apple's do (`CustomStringConvertible`), for logs.

extension CKSyncEngine.Event.StateUpdate: CustomStringConvertible {
    public var description: String { "state to keep" }
}

extension CKSyncEngine.Event.AccountChange: CustomStringConvertible {
    public var description: String {
        switch changeType {
        case .signIn(let user): "signIn \(user.recordName)"
        case .signOut(let user): "signOut \(user.recordName)"
        case .switchAccounts(let previous, let current): "switchAccounts \(previous.recordName) to \(current.recordName)"
        }
    }
}

extension CKSyncEngine.Event.FetchedDatabaseChanges: CustomStringConvertible {
    public var description: String { "\(modifications.count) modified, \(deletions.count) deleted" }
}

extension CKSyncEngine.Event.FetchedRecordZoneChanges: CustomStringConvertible {
    public var description: String { "\(modifications.count) modified, \(deletions.count) deleted" }
}

extension CKSyncEngine.Event.SentDatabaseChanges: CustomStringConvertible {
    public var description: String {
        "\(savedZones.count) saved, \(deletedZoneIDs.count) deleted, \(failedZoneSaves.count + failedZoneDeletes.count) failed"
    }
}

extension CKSyncEngine.Event.SentDatabaseChanges.FailedZoneSave: CustomStringConvertible {
    public var description: String { "\(zone.zoneID.zoneName): \(error.code)" }
}

extension CKSyncEngine.Event.SentRecordZoneChanges: CustomStringConvertible {
    public var description: String {
        "\(savedRecords.count) saved, \(deletedRecordIDs.count) deleted, \(failedRecordSaves.count + failedRecordDeletes.count) failed"
    }
}

extension CKSyncEngine.Event.SentRecordZoneChanges.FailedRecordSave: CustomStringConvertible {
    public var description: String { "\(record.recordID.recordName): \(error.code)" }
}

extension CKSyncEngine.Event.WillFetchChanges: CustomStringConvertible {
    public var description: String { "\(context.reason)" }
}

extension CKSyncEngine.Event.WillFetchRecordZoneChanges: CustomStringConvertible {
    public var description: String { zoneID.zoneName }
}

extension CKSyncEngine.Event.DidFetchRecordZoneChanges: CustomStringConvertible {
    public var description: String { zoneID.zoneName + (error.map { ", \($0.code)" } ?? "") }
}

extension CKSyncEngine.Event.DidFetchChanges: CustomStringConvertible {
    public var description: String { "\(context.reason)" }
}

extension CKSyncEngine.Event.WillSendChanges: CustomStringConvertible {
    public var description: String { "\(context.reason)" }
}

extension CKSyncEngine.Event.DidSendChanges: CustomStringConvertible {
    public var description: String { "\(context.reason)" }
}
