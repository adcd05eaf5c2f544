import Foundation
import CloudStore

/// The record IDs a caller passed, found again from the engine's: the engine names a zone's
/// owner, the caller may have written `__defaultOwner__`, and results keyed by ID must use the
/// caller's own (`saveResults[myID]`). Records are matched by zone and record name.
struct CallerIDs {
    private var byName: [String: CKRecord.ID] = [:]

    init(_ ids: [CKRecord.ID]) {
        for id in ids { byName[Self.key(id)] = id }
    }

    /// The caller's ID for the record the engine names `id`; `id` itself when the caller
    /// passed none.
    subscript(_ id: RecordID) -> CKRecord.ID { byName[Self.key(id.zoneID.zoneName, id.recordName)] ?? CKRecord.ID(id) }

    private static func key(_ id: CKRecord.ID) -> String { key(id.zoneID.zoneName, id.recordName) }
    private static func key(_ zoneName: String, _ recordName: String) -> String { zoneName + "\u{0}" + recordName }
}
