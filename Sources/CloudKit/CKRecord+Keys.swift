import Foundation
import CloudStore

/// The names of a record's system fields, as queries and sorts use them
/// (`NSSortDescriptor(key: CKRecord.SystemFieldKey.creationDate, ascending: false)`).
extension CKRecord {
    public enum SystemFieldKey {
        public static var recordID: CKRecord.FieldKey { "recordID" }
        public static var creationDate: CKRecord.FieldKey { "creationDate" }
        public static var creatorUserRecordID: CKRecord.FieldKey { "creatorUserRecordID" }
        public static var modificationDate: CKRecord.FieldKey { "modificationDate" }
        public static var lastModifiedUserRecordID: CKRecord.FieldKey { "lastModifiedUserRecordID" }
        public static let parent: CKRecord.FieldKey = "parent"
        public static let share: CKRecord.FieldKey = "share"
    }
}

/// Apple's older names of ``CKRecord/SystemFieldKey/parent``, ``CKRecord/SystemFieldKey/share``
/// and the default zone's name.
public let CKRecordParentKey = CKRecord.SystemFieldKey.parent
public let CKRecordShareKey = CKRecord.SystemFieldKey.share
public let CKRecordZoneDefaultName = CKRecordZone.ID.defaultZoneName
/// Apple's older name of `CKRecord.ReferenceAction`.
public typealias CKRecord_Reference_Action = CKRecord.ReferenceAction

/// A record's fields, one by one, as `for (key, value) in record` walks them: its fields that
/// are not encrypted, in ``CKRecord/allKeys()``'s order.
public struct CKRecordKeyValueIterator: IteratorProtocol {
    private let record: CKRecord
    private var keys: IndexingIterator<[CKRecord.FieldKey]>

    init(_ record: CKRecord) {
        self.record = record
        keys = record.allKeys().makeIterator()
    }

    public mutating func next() -> (CKRecord.FieldKey, any CKRecordValueProtocol)? {
        while let key = keys.next() {
            if let value = record[key] { return (key, value) }
        }
        return nil
    }
}

extension CKRecord: Sequence {
    public func makeIterator() -> CKRecordKeyValueIterator { CKRecordKeyValueIterator(self) }
}

/// Key-value coding, as Apple's `NSObject` gives a record (Linux Foundation's has none): a
/// field's value, and setting one. A value that is no record value leaves the field as it
/// was, as ``CKRecord/setValuesForKeys(_:)`` does; nil or `NSNull` removes it.
extension CKRecord {
    public func value(forKey key: String) -> Any? { self[key] }

    public func setValue(_ value: Any?, forKey key: String) {
        guard let value, !(value is NSNull) else {
            self[key] = nil
            return
        }
        setValuesForKeys([key: value])
    }
}
