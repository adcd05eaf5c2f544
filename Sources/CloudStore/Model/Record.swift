/// Who saved a record, when, and from which device.
public struct Stamp: Sendable, Equatable {
    /// Milliseconds since 1970.
    public var timestamp: Int64
    public var userRecordName: String
    public var deviceID: String

    public init(timestamp: Int64, userRecordName: String, deviceID: String) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
    }
}

/// A record as the engine keeps it: type, ID, fields and the system fields the store sets.
///
/// Setting a field through the subscript notes its key in ``changedKeys``; records read
/// from the store start with none.
public struct Record: Sendable, Equatable {
    public let recordType: String
    public let recordID: RecordID
    public private(set) var fields: [String: FieldValue]
    /// Changes on every save; nil for a record never saved.
    public var recordChangeTag: String?
    public var created: Stamp?
    public var modified: Stamp?
    public private(set) var changedKeys: Set<String> = []
    /// The fields written through `encryptedValues` (``subscript(encrypted:)``), a subset of
    /// `fields`' keys: no query may use them, and the public database refuses them.
    public private(set) var encryptedKeys: Set<String> = []
    /// The record this one belongs under (CloudKit's `parent`), by name, in the same zone: a
    /// share of an ancestor shares this record too. Setting it notes ``parentKey`` in
    /// ``changedKeys``.
    public var parent: String? {
        didSet { changedKeys.insert(Self.parentKey) }
    }
    /// The share whose root this record is (CloudKit's `share`), by record name; the store
    /// sets it when the share is saved and clears it when the share is deleted.
    public internal(set) var share: String?
    /// What the share grants, for a record of type `cloudkit.share`.
    public var shareInfo: ShareInfo?

    /// The key ``changedKeys`` holds when `parent` was set: no field can be named so.
    public static let parentKey = "parent"

    public var isShare: Bool { recordType == ShareInfo.recordType }

    public init(recordType: String, recordID: RecordID = RecordID(), fields: [String: FieldValue] = [:]) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = fields
        self.changedKeys = Set(fields.keys)
    }

    /// A record as stored: all system fields known, nothing changed.
    init(stored recordType: String, recordID: RecordID, fields: [String: FieldValue], encryptedKeys: Set<String> = [],
         tag: String?, created: Stamp?, modified: Stamp?, parent: String? = nil, share: String? = nil, shareInfo: ShareInfo? = nil) {
        self.recordType = recordType
        self.recordID = recordID
        self.fields = fields
        self.encryptedKeys = encryptedKeys.intersection(fields.keys)
        self.recordChangeTag = tag
        self.created = created
        self.modified = modified
        self.parent = parent
        self.share = share
        self.shareInfo = shareInfo
    }

    /// A field, encrypted or not; setting one makes it a field that is not encrypted.
    public subscript(key: String) -> FieldValue? {
        get { fields[key] }
        set {
            fields[key] = newValue
            encryptedKeys.remove(key)
            changedKeys.insert(key)
        }
    }

    /// An encrypted field (CloudKit's `encryptedValues`): nil for a field that is not
    /// encrypted; setting one makes it encrypted.
    public subscript(encrypted key: String) -> FieldValue? {
        get { encryptedKeys.contains(key) ? fields[key] : nil }
        set {
            fields[key] = newValue
            if newValue == nil { encryptedKeys.remove(key) } else { encryptedKeys.insert(key) }
            changedKeys.insert(key)
        }
    }

    /// Changes a field's value, keeping whether it is encrypted.
    public mutating func update(_ key: String, to newValue: FieldValue) {
        if encryptedKeys.contains(key) { self[encrypted: key] = newValue } else { self[key] = newValue }
    }

    /// The type of a field as the schema keeps it, `ENCRYPTED_…` for an encrypted one.
    public func fieldType(_ key: String) -> FieldType? {
        fields[key].map { $0.type.encrypted(encryptedKeys.contains(key)) }
    }

    public var allKeys: [String] { fields.keys.sorted() }

    /// Sorted, de-duplicated white-space tokens of every string field that is not encrypted
    /// (the server cannot read those).
    public var allTokens: [String] {
        Array(Set(fields.filter { !encryptedKeys.contains($0.key) }.values.flatMap(\.tokens).map { $0.lowercased() })).sorted()
    }

    /// Bytes the record counts toward the 1 MB limit: each key and each value; asset
    /// contents are not counted.
    public var size: Int {
        fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.size }
    }

    /// Bytes the record counts toward its database's quota: its size and its assets.
    public var usageBytes: Int64 {
        Int64(size) + fields.values.reduce(0) { total, value in
            switch value {
            case .asset(let a): total + a.size
            case .list(.asset, let vs): total + vs.reduce(0) { if case .asset(let a) = $1 { $0 + a.size } else { $0 } }
            default: total
            }
        }
    }

    /// The records this one points at with `deleteSelf`, with the field holding each.
    public var deleteSelfReferences: [(key: String, target: String)] {
        fields.flatMap { key, value -> [(key: String, target: String)] in
            switch value {
            case .reference(let r) where r.action == .deleteSelf: [(key, r.recordName)]
            case .list(.reference, let refs):
                refs.compactMap { if case .reference(let r) = $0, r.action == .deleteSelf { (key, r.recordName) } else { nil } }
            default: []
            }
        }
    }

    /// The asset the record holds with checksum `checksum`, if any.
    func asset(checksum: String) -> Asset? {
        for value in fields.values {
            switch value {
            case .asset(let a) where a.fileChecksum == checksum: return a
            case .list(.asset, let vs):
                for case .asset(let a) in vs where a.fileChecksum == checksum { return a }
            default: continue
            }
        }
        return nil
    }

    /// Checksums of the assets the record holds.
    var assetChecksums: [String] {
        fields.values.flatMap { value -> [String] in
            switch value {
            case .asset(let a): [a.fileChecksum]
            case .list(.asset, let vs): vs.compactMap { if case .asset(let a) = $0 { a.fileChecksum } else { nil } }
            default: []
            }
        }
    }

    public var creationDateMillis: Int64? { created?.timestamp }
    public var modificationDateMillis: Int64? { modified?.timestamp }

    /// Marks every field as unchanged, as after a fetch or a save.
    public mutating func clearChangedKeys() { changedKeys = [] }

    /// Marks keys as changed without changing their values (used to decode input files).
    package mutating func markChanged(_ keys: some Sequence<String>) { changedKeys.formUnion(keys) }

    /// The same record with only the given fields (a fetch's `desiredKeys`); nil keeps all.
    public func limited(to keys: [String]?) -> Record {
        guard let keys else { return self }
        var copy = self
        copy.fields = fields.filter { keys.contains($0.key) }
        copy.encryptedKeys.formIntersection(copy.fields.keys)
        return copy
    }

    /// The same record with system fields and the given fields, as a save writes it.
    package func replacingFields(_ newFields: [String: FieldValue], encryptedKeys newEncrypted: Set<String> = []) -> Record {
        var copy = self
        copy.fields = newFields
        copy.encryptedKeys = newEncrypted.intersection(newFields.keys)
        return copy
    }

    /// A copy with the record's zone named as stored.
    package func inZone(_ zoneID: ZoneID) -> Record {
        Record(stored: recordType, recordID: RecordID(recordName: recordID.recordName, zoneID: zoneID),
               fields: fields, encryptedKeys: encryptedKeys, tag: recordChangeTag, created: created, modified: modified,
               parent: parent, share: share, shareInfo: shareInfo)
    }

    /// The same record as the root of `share` (nil: of none).
    func sharedBy(_ share: String?) -> Record {
        var copy = self
        copy.share = share
        return copy
    }
}
