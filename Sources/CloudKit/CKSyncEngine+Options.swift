import Foundation
import CloudStore

extension CKSyncEngine {
    /// Why a sync runs.
    public enum SyncReason: Sendable, Hashable, CustomStringConvertible {
        /// Started by the engine itself (`automaticallySync`).
        case scheduled
        /// Asked for with `fetchChanges(_:)` or `sendChanges(_:)`.
        case manual

        public var description: String { self == .scheduled ? "scheduled" : "manual" }
    }

    /// Which zones a fetch looks at.
    public struct FetchChangesOptions: Sendable, CustomStringConvertible {
        public enum Scope: Sendable, Equatable, CustomStringConvertible {
            case all
            case allExcluding([CKRecordZone.ID])
            case zoneIDs([CKRecordZone.ID])

            public func contains(_ zoneID: CKRecordZone.ID) -> Bool {
                switch self {
                case .all: true
                case .allExcluding(let ids): !ids.contains(zoneID)
                case .zoneIDs(let ids): ids.contains(zoneID)
                }
            }

            public var description: String {
                switch self {
                case .all: "all"
                case .allExcluding(let ids): "allExcluding(\(ids.map(\.zoneName)))"
                case .zoneIDs(let ids): "zoneIDs(\(ids.map(\.zoneName)))"
                }
            }
        }

        public var scope: Scope
        public var operationGroup: CKOperationGroup
        /// Zones to fetch before the others.
        public var prioritizedZoneIDs: [CKRecordZone.ID] = []

        public init(scope: Scope = .all, operationGroup: CKOperationGroup? = nil) {
            self.scope = scope
            self.operationGroup = operationGroup ?? CKOperationGroup()
        }

        public var description: String { "FetchChangesOptions(scope: \(scope))" }
    }

    /// Which changes a send takes.
    public struct SendChangesOptions: Sendable, CustomStringConvertible {
        public enum Scope: Sendable, Equatable, CustomStringConvertible {
            case all
            case allExcluding([CKRecordZone.ID])
            case zoneIDs([CKRecordZone.ID])
            case recordIDs([CKRecord.ID])

            public func contains(_ recordID: CKRecord.ID) -> Bool {
                switch self {
                case .all: true
                case .allExcluding(let ids): !ids.contains(recordID.zoneID)
                case .zoneIDs(let ids): ids.contains(recordID.zoneID)
                case .recordIDs(let ids): ids.contains(recordID)
                }
            }

            public func contains(_ pendingChange: PendingRecordZoneChange) -> Bool { contains(pendingChange.recordID) }

            /// Whether a zone change is in scope: every one but for a scope of other zones.
            func contains(zone: CKRecordZone.ID) -> Bool {
                switch self {
                case .all, .recordIDs: true
                case .allExcluding(let ids): !ids.contains(zone)
                case .zoneIDs(let ids): ids.contains(zone)
                }
            }

            public var description: String {
                switch self {
                case .all: "all"
                case .allExcluding(let ids): "allExcluding(\(ids.map(\.zoneName)))"
                case .zoneIDs(let ids): "zoneIDs(\(ids.map(\.zoneName)))"
                case .recordIDs(let ids): "recordIDs(\(ids.map(\.recordName)))"
                }
            }
        }

        public var scope: Scope
        public var operationGroup: CKOperationGroup

        public init(scope: Scope = .all, operationGroup: CKOperationGroup? = nil) {
            self.scope = scope
            self.operationGroup = operationGroup ?? CKOperationGroup()
        }

        public var description: String { "SendChangesOptions(scope: \(scope))" }
    }

    public struct FetchChangesContext: Sendable, CustomStringConvertible {
        public let reason: SyncReason
        public let options: FetchChangesOptions
        public var description: String { "FetchChangesContext(\(reason), \(options))" }
    }

    public struct SendChangesContext: Sendable, CustomStringConvertible {
        public let reason: SyncReason
        public let options: SendChangesOptions
        public var description: String { "SendChangesContext(\(reason), \(options))" }
    }
}
