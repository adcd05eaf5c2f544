import Foundation
import CloudStore

extension CKSyncEngine {
    /// Records to save and delete in one send.
    public struct RecordZoneChangeBatch: Sendable, CustomStringConvertible {
        /// At most this many records a batch made from pending changes (CloudKit's limit on
        /// one modify operation).
        static let maximumItems = 400

        public var recordsToSave: [CKRecord]
        public var recordIDsToDelete: [CKRecord.ID]
        /// When true, one failure in a zone fails the batch's other changes in that zone.
        public var atomicByZone: Bool

        public init(recordsToSave: [CKRecord] = [], recordIDsToDelete: [CKRecord.ID] = [], atomicByZone: Bool = false) {
            self.recordsToSave = recordsToSave
            self.recordIDsToDelete = recordIDsToDelete
            self.atomicByZone = atomicByZone
        }

        /// A batch of `pendingChanges` in their order, up to the batch limit: each save's record
        /// from `recordProvider` (one it gives nil for is left out), each delete as it is. Nil
        /// when nothing is left to send.
        public init?(pendingChanges: [PendingRecordZoneChange], recordProvider: @Sendable (CKRecord.ID) async -> CKRecord?) async {
            var saves: [CKRecord] = []
            var deletes: [CKRecord.ID] = []
            for change in pendingChanges where saves.count + deletes.count < Self.maximumItems {
                switch change {
                case .saveRecord(let id): if let record = await recordProvider(id) { saves.append(record) }
                case .deleteRecord(let id): deletes.append(id)
                }
            }
            guard !saves.isEmpty || !deletes.isEmpty else { return nil }
            self.init(recordsToSave: saves, recordIDsToDelete: deletes)
        }

        public var description: String { "RecordZoneChangeBatch(\(recordsToSave.count) to save, \(recordIDsToDelete.count) to delete)" }
    }
}
