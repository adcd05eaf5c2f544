import Foundation
import CloudStore

/// A link to another record in the same zone, `CKRecord.Reference`: an `NSObject` with
/// `NSSecureCoding`, as Apple's, so sync code can archive it. (A top-level class: Linux
/// Foundation's archiver names only those.)
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s.
public final class CKReference: NSObject, NSSecureCoding, NSCopying, CKRecordValueProtocol, @unchecked Sendable {
    public enum Action: UInt, Sendable { case none = 0, deleteSelf = 1 }
    public let recordID: CKRecord.ID
    public let action: Action

    public init(recordID: CKRecord.ID, action: Action) {
        self.recordID = recordID
        self.action = action
        super.init()
    }

    public convenience init(record: CKRecord, action: Action) { self.init(recordID: record.recordID, action: action) }

    convenience init(reference: CloudStore.Reference) {
        self.init(recordID: CKRecord.ID(recordName: reference.recordName), action: reference.action == .deleteSelf ? .deleteSelf : .none)
    }

    public var fieldValue: FieldValue {
        .reference(CloudStore.Reference(recordName: recordID.recordName, action: action == .deleteSelf ? .deleteSelf : .none))
    }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(recordID, forKey: "recordID")
        coder.encode(Int64(action.rawValue), forKey: "action")
    }

    public init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: CKRecord.ID.self, forKey: "recordID") else { return nil }
        recordID = id
        action = coder.containsValue(forKey: "action") ? Action(rawValue: UInt(coder.decodeInt64(forKey: "action"))) ?? .none : .none
        super.init()
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Equal when they point at the same record with the same action.
    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKReference else { return false }
        return other.recordID == recordID && other.action == action
    }

    public override var hash: Int { recordID.hash ^ Int(action.rawValue) }

    public override var description: String { "<CKReference: \(recordID.recordName), \(action == .deleteSelf ? "deleteSelf" : "none")>" }
}
