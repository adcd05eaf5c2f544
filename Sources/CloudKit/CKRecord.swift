import Foundation
import CloudStore

/// Stands for the current user where an owner name is asked for.
public let CKCurrentUserDefaultName = ZoneID.currentUserOwnerName
/// CloudKit's older name for ``CKCurrentUserDefaultName``.
public let CKOwnerDefaultName = ZoneID.currentUserOwnerName

/// A record as CloudKit code uses it: an `NSObject` with a subscript, `changedKeys()`,
/// `allTokens()`, `encodeSystemFields(with:)`, and `NSSecureCoding` for the whole record.
///
/// Like CloudKit's, a `CKRecord` is meant for one thread at a time; a lock still keeps it
/// whole if that rule is broken.
///
/// `open`, as Apple's: ``CKShare`` is a record, and an app may subclass it.
///
/// `@unchecked Sendable`: `value` is only touched under `lock`.
open class CKRecord: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// How a reference acts when its target is deleted (`CKRecord.Reference.Action`).
    public typealias ReferenceAction = Reference.Action
    /// A field's name.
    public typealias FieldKey = String
    public typealias RecordType = String

    /// A link to another record in the same zone (``CKReference``).
    public typealias Reference = CKReference

    /// Guards `value`.
    private let lock = NSLock()
    private var value: Record
    /// Where the record's assets are kept, once it came from a database.
    let assetDirectory: String?

    public init(recordType: RecordType, recordID: ID) {
        value = Record(recordType: recordType, recordID: recordID.engine)
        self.recordID = recordID
        assetDirectory = nil
        super.init()
    }

    /// A record with a new name (a UUID) in the default zone.
    public convenience init(recordType: RecordType) { self.init(recordType: recordType, recordID: ID()) }

    public convenience init(recordType: RecordType, zoneID: CKRecordZone.ID) {
        self.init(recordType: recordType, recordID: ID(zoneID: zoneID))
    }

    /// A record holding the engine's `record`, whose assets are files under `assetDirectory`
    /// (a database's asset folder; nil for a record not from a database). Public, as every
    /// designated initializer of this class, so that an app's subclass inherits them all.
    public init(_ record: Record, assetDirectory: String?) {
        value = record
        recordID = ID(record.recordID)
        self.assetDirectory = assetDirectory
        super.init()
    }

    /// The engine's value of this record.
    public var record: Record { lock.withLock { value } }

    /// Changes the engine's value under the lock (for ``CKShare``'s participants).
    func update(_ change: (inout Record) -> Void) { lock.withLock { change(&value) } }

    /// The record this one belongs under: a share of an ancestor shares this record too. A
    /// parent is in the same zone and acts as `.none`.
    public var parent: Reference? {
        get { record.parent.map { Reference(recordID: ID(recordName: $0, zoneID: recordID.zoneID), action: .none) } }
        set { lock.withLock { value.parent = newValue?.recordID.recordName } }
    }

    /// The share whose root this record is; set by the store when the share is saved.
    public var share: Reference? {
        record.share.map { Reference(recordID: ID(recordName: $0, zoneID: recordID.zoneID), action: .none) }
    }

    public func setParent(_ parentRecord: CKRecord?) { parent = parentRecord.map { Reference(record: $0, action: .none) } }
    public func setParent(_ parentRecordID: ID?) { parent = parentRecordID.map { Reference(recordID: $0, action: .none) } }

    public var recordType: RecordType { record.recordType }
    /// Made once, as Apple's: reading it twice gives the same object. A record's ID never changes.
    public let recordID: ID
    public var recordChangeTag: String? { record.recordChangeTag }
    public var creationDate: Date? { record.created.map { Date(millisecondsSince1970: $0.timestamp) } }
    public var modificationDate: Date? { record.modified.map { Date(millisecondsSince1970: $0.timestamp) } }
    public var creatorUserRecordID: ID? { record.created.map { ID(recordName: $0.userRecordName) } }
    public var lastModifiedUserRecordID: ID? { record.modified.map { ID(recordName: $0.userRecordName) } }

    /// A field that is not encrypted (an encrypted one is read through `encryptedValues`).
    public subscript(key: String) -> (any CKRecordValueProtocol)? {
        get {
            let record = record
            return record.encryptedKeys.contains(key) ? nil : swiftValue(record[key])
        }
        set { lock.withLock { value[key] = newValue?.fieldValue } }
    }

    /// The record's encrypted fields, read and written as its other fields are: kept only in
    /// the private database, and never used by a query.
    public var encryptedValues: any CKRecordKeyValueSetting & Sendable { EncryptedValues(record: self) }

    func encryptedValue(_ key: String) -> (any CKRecordValueProtocol)? { swiftValue(record[encrypted: key]) }
    func setEncryptedValue(_ newValue: (any CKRecordValueProtocol)?, _ key: String) {
        lock.withLock { value[encrypted: key] = newValue?.fieldValue }
    }

    private func swiftValue(_ field: FieldValue?) -> (any CKRecordValueProtocol)? {
        let dir = assetDirectory
        return field?.swiftValue { URL(fileURLWithPath: (dir ?? "") + "/" + $0.fileChecksum) }
    }

    /// A field as the type asked for, as Apple's generic subscript gives it:
    /// `let title: String? = record["title"]`; nil when the field is missing or of another type.
    public subscript<T: CKRecordValueProtocol>(key: CKRecord.FieldKey) -> T? {
        get { Self.converted(self[key]) }
        set { lock.withLock { value[key] = newValue?.fieldValue } }
    }

    /// `value` as the type asked for; a number read as another kind of number, as Apple's
    /// NSNumber bridging reads it.
    static func converted<T: CKRecordValueProtocol>(_ value: (any CKRecordValueProtocol)?) -> T? {
        if let exact = value as? T { return exact }
        switch value {
        case let n as NSNumber where ["f", "d"].contains(String(cString: n.objCType)):
            return Int64(exactly: n.doubleValue).flatMap { number($0, as: T.self) } as? T ?? (T.self == Float.self ? Float(exactly: n.doubleValue) as? T : nil)
        case let n as NSNumber: return T.self == Bool.self ? (n.int64Value != 0) as? T : number(n.int64Value, as: T.self) as? T
        case let list as [NSNumber] where T.self == [Bool].self: return list.map { $0.int64Value != 0 } as? T
        // A LOCATION reads as CoreLocation's `CLLocation`, as Apple's; ckfs's `Location` too.
        case let place as CLLocation: return place.location as? T
        case let places as [CLLocation]: return places.map(\.location) as? T
        default: return nil
        }
    }

    /// A stored integer as the number type asked for, when that type holds it exactly.
    private static func number(_ n: Int64, as type: Any.Type) -> Any? {
        switch type {
        case is Int.Type: Int(exactly: n)
        case is Int64.Type: n
        case is Int32.Type: Int32(exactly: n)
        case is Int16.Type: Int16(exactly: n)
        case is Int8.Type: Int8(exactly: n)
        case is UInt.Type: UInt(exactly: n)
        case is UInt64.Type: UInt64(exactly: n)
        case is UInt32.Type: UInt32(exactly: n)
        case is UInt16.Type: UInt16(exactly: n)
        case is UInt8.Type: UInt8(exactly: n)
        case is Double.Type: Double(exactly: n)
        case is Float.Type: Float(exactly: n)
        default: nil
        }
    }

    public func object(forKey key: String) -> (any CKRecordValueProtocol)? { self[key] }
    public func setObject(_ object: (any CKRecordValueProtocol)?, forKey key: String) { self[key] = object }

    /// Sets several fields at once, as Apple's key-value coding does; `NSNull` removes a field.
    /// Foundation's objects (`NSNumber`, `NSString`, `NSDate`, `NSArray`, as `JSONSerialization`
    /// and property lists give them) and other number types count as the record values they
    /// hold; anything else leaves its field as it was.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues {
            if value is NSNull { self[key] = nil } else if let value = Self.recordValue(value) { self[key] = value }
        }
    }

    /// `value` as a record value: a record value as it is, and Foundation's objects and other
    /// number types through their property-list form (the key-value store's bridging).
    static func recordValue(_ value: Any) -> (any CKRecordValueProtocol)? {
        if let v = value as? any CKRecordValueProtocol { return v }
        return (try? PropertyListValue(foundationObject: value)).flatMap(recordValue)
    }

    /// A property-list value as a record value; a dictionary, or a list of mixed kinds, has none.
    private static func recordValue(_ value: PropertyListValue) -> (any CKRecordValueProtocol)? {
        switch value {
        case .string(let s): return s
        case .integer(let i): return Int(i)
        case .real(let d): return d
        case .bool(let b): return b
        case .date(let d): return d
        case .data(let bytes): return Data(bytes)
        case .dictionary: return nil
        case .array(let items):
            let values = items.compactMap(recordValue)
            guard values.count == items.count else { return nil }
            if let strings = values as? [String] { return strings }
            if let ints = values as? [Int] { return ints }
            if let doubles = values.map({ ($0 as? Double) ?? ($0 as? Int).map(Double.init) }) as? [Double] { return doubles }
            if let dates = values as? [Date] { return dates }
            return nil
        }
    }

    /// The keys of the fields that are not encrypted.
    public func allKeys() -> [String] {
        let record = record
        return record.allKeys.filter { !record.encryptedKeys.contains($0) }
    }
    /// Keys of fields that are not encrypted changed since the record was fetched or saved.
    public func changedKeys() -> [String] {
        let record = record
        return record.changedKeys.subtracting(record.encryptedKeys).subtracting([Record.parentKey]).sorted()
    }
    /// Every string field split on white space.
    public func allTokens() -> [String] { record.allTokens }

    /// Writes only the system fields, so a client can keep them and later make a record
    /// that saves as the same version: `CKRecord(coder:)` reads them back.
    public func encodeSystemFields(with coder: NSCoder) {
        var system = record.replacingFields([:])
        system.clearChangedKeys()
        coder.encode(Data(JSONWriter.compact(RecordCoding.encode(system))), forKey: Self.systemFieldsKey)
    }

    /// The record as `encode(with:)` wrote it, or with only the system fields
    /// `encodeSystemFields(with:)` wrote (and no fields).
    public required convenience init?(coder: NSCoder) {
        // Linux Foundation raises, rather than answer nil, for a key the archive does not have.
        func data(_ key: String) -> Data? {
            coder.containsValue(forKey: key) ? coder.decodeObject(of: NSData.self, forKey: key).map { Data(referencing: $0) } : nil
        }
        let whole = data(Self.wholeRecordKey)
        guard let data = whole ?? data(Self.systemFieldsKey),
              let json = try? JSONParser.parse(Array(data)),
              let decoded = try? RecordCoding.decode(json, mode: .stored) else { return nil }
        let directory = whole == nil || !coder.containsValue(forKey: Self.assetDirectoryKey) ? nil
            : coder.decodeObject(of: NSString.self, forKey: Self.assetDirectoryKey) as String?
        var record = decoded.record
        if whole != nil, coder.containsValue(forKey: Self.changedKeysKey),
           let keys = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: Self.changedKeysKey) as? [String] {
            record.markChanged(keys)
        }
        self.init(record, assetDirectory: directory)
    }

    public static var supportsSecureCoding: Bool { true }

    /// Writes the whole record: its system fields, its fields, the keys changed since it was
    /// fetched or saved (so a save after unarchiving sends them), and where its assets are.
    public func encode(with coder: NSCoder) {
        let value = record
        coder.encode(NSData(data: Data(JSONWriter.compact(RecordCoding.encode(value)))), forKey: Self.wholeRecordKey)
        coder.encode(NSArray(array: value.changedKeys.sorted().map { $0 as NSString }), forKey: Self.changedKeysKey)
        if let assetDirectory { coder.encode(assetDirectory as NSString, forKey: Self.assetDirectoryKey) }
    }

    /// A new record with the same ID, version, fields and changed keys.
    public func copy(with zone: NSZone? = nil) -> Any { CKRecord.make(record, assetDirectory: assetDirectory) }

    static let systemFieldsKey = "CKRecordSystemFields"
    static let wholeRecordKey = "CKRecord"
    static let assetDirectoryKey = "CKRecordAssetDirectory"
    static let changedKeysKey = "CKRecordChangedKeys"

    public override var description: String { "<CKRecord \(recordType) \(recordID.recordName) tag \(recordChangeTag ?? "none")>" }
}

extension ZoneID {
    /// The zone as CloudKit code names a zone of the database it works in: owned by
    /// `CKCurrentUserDefaultName`, whatever user record the engine names as its owner.
    var asCallerWritesIt: ZoneID { ZoneID(zoneName: zoneName, ownerName: CKCurrentUserDefaultName) }
}

extension CKRecord {
    /// The engine's record as CloudKit code sees it, in its zone as the caller writes it (in
    /// a shared database, named with its owner).
    static func presented(_ record: Record, assetDirectory: String?, keepingOwner: Bool = false) -> CKRecord {
        make(keepingOwner ? record : record.inZone(record.recordID.zoneID.asCallerWritesIt), assetDirectory: assetDirectory)
    }

    /// A `CKShare` for a share, else a `CKRecord`.
    static func make(_ record: Record, assetDirectory: String?) -> CKRecord {
        record.isShare ? CKShare(record, assetDirectory: assetDirectory) : CKRecord(record, assetDirectory: assetDirectory)
    }
}

/// The record type of users' records (`Users`), one per user in the public database.
public let CKRecordTypeUserRecord: CKRecord.RecordType = Schema.usersRecordType

extension CKRecord {
    /// The record types the system defines, as Apple's.
    public enum SystemType {
        public static let userRecord: CKRecord.RecordType = CKRecordTypeUserRecord
        public static let share: CKRecord.RecordType = CKRecordTypeShare
    }
}
