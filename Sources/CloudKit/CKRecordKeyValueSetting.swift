import Foundation
import CloudStore

/// Keyed access to a record's fields, as Apple's protocol declares it: `CKRecord` itself and
/// its `encryptedValues` conform.
public protocol CKRecordKeyValueSetting: NSObjectProtocol {
    func object(forKey key: CKRecord.FieldKey) -> (any CKRecordValueProtocol)?
    func setObject(_ object: (any CKRecordValueProtocol)?, forKey key: CKRecord.FieldKey)
    subscript(key: CKRecord.FieldKey) -> (any CKRecordValueProtocol)? { get set }
    func allKeys() -> [CKRecord.FieldKey]
    func changedKeys() -> [CKRecord.FieldKey]
}

extension CKRecordKeyValueSetting {
    /// A value as the type asked for (`let phone: String? = record.encryptedValues["phone"]`),
    /// as `CKRecord`'s generic subscript gives it; nil when missing or of another type.
    public subscript<T: CKRecordValueProtocol>(key: CKRecord.FieldKey) -> T? {
        get { CKRecord.converted(self[key]) }
        set { self[key] = newValue }
    }
}

extension CKRecord: CKRecordKeyValueSetting {}

/// A record's encrypted fields: a view of the record, so a value set here is saved with it.
///
/// `@unchecked Sendable`: it holds only the record, whose fields are behind the record's lock.
final class EncryptedValues: NSObject, CKRecordKeyValueSetting, @unchecked Sendable {
    private let record: CKRecord

    init(record: CKRecord) { self.record = record }

    func object(forKey key: CKRecord.FieldKey) -> (any CKRecordValueProtocol)? { record.encryptedValue(key) }
    func setObject(_ object: (any CKRecordValueProtocol)?, forKey key: CKRecord.FieldKey) { record.setEncryptedValue(object, key) }

    subscript(key: CKRecord.FieldKey) -> (any CKRecordValueProtocol)? {
        get { record.encryptedValue(key) }
        set { record.setEncryptedValue(newValue, key) }
    }

    func allKeys() -> [CKRecord.FieldKey] { record.record.encryptedKeys.sorted() }

    func changedKeys() -> [CKRecord.FieldKey] {
        let value = record.record
        return value.changedKeys.intersection(value.encryptedKeys).sorted()
    }

    /// A copy is the same view: its values are the record's.
    override func copy() -> Any { EncryptedValues(record: record) }
}
