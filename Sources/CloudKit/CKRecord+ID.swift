import Foundation
import CloudStore

extension CKRecordZone {
    public typealias ID = CKRecordZoneID
}

extension CKRecord {
    public typealias ID = CKRecordID
}

/// Names a zone, as CloudKit's `CKRecordZone.ID`: an `NSObject` that is equal to another of
/// the same zone and owner names, and archives with `NSKeyedArchiver` (`NSSecureCoding`).
///
/// Declared at the top level, under the Objective-C name Apple's class has, because Linux
/// Foundation's archiver names classes with `NSStringFromClass`, which refuses nested ones;
/// code writes `CKRecordZone.ID`, as for Apple's.
///
/// `@unchecked Sendable`: immutable, its stored properties are `let`s; `open`, as Apple's, so
/// the compiler cannot check subclasses.
open class CKRecordZoneID: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The name of the zone every database has (`_defaultZone`).
    public static let defaultZoneName = ZoneID.defaultZoneName
    /// The default zone of the current user's database.
    public static let `default` = CKRecordZoneID()

    public let zoneName: String
    public let ownerName: String

    public init(zoneName: String = CKRecordZoneID.defaultZoneName, ownerName: String = CKCurrentUserDefaultName) {
        self.zoneName = zoneName
        self.ownerName = ownerName
    }

    /// Apple's first form, deprecated since iOS 10, whose owner may be nil: the current user.
    /// Disfavored, so that a call with a `String` owner, or none, takes the form above.
    @available(*, deprecated, message: "give the owner as a String: CKCurrentUserDefaultName for the current user")
    @_disfavoredOverload
    public convenience init(zoneName: String = CKRecordZoneID.defaultZoneName, ownerName: String? = CKOwnerDefaultName) {
        self.init(zoneName: zoneName, ownerName: ownerName ?? CKCurrentUserDefaultName)
    }

    /// The engine's zone ID, with the same names.
    convenience init(_ zoneID: ZoneID) { self.init(zoneName: zoneID.zoneName, ownerName: zoneID.ownerName) }

    /// The engine's zone ID with the same names.
    var engine: ZoneID { ZoneID(zoneName: zoneName, ownerName: ownerName) }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(zoneName as NSString, forKey: "ZoneName")
        coder.encode(ownerName as NSString, forKey: "ownerName")
    }

    public required init?(coder: NSCoder) {
        guard let zone = coder.decodeObject(of: NSString.self, forKey: "ZoneName") as String?,
              let owner = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String? else { return nil }
        zoneName = zone
        ownerName = owner
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKRecordZoneID else { return false }
        return other.zoneName == zoneName && other.ownerName == ownerName
    }

    open override var hash: Int { zoneName.hashValue ^ ownerName.hashValue &* 31 }

    open override var description: String { "<CKRecordZoneID: zoneName=\(zoneName), ownerName=\(ownerName)>" }
}

/// Names a record, as CloudKit's `CKRecord.ID`: an `NSObject` that is equal to another of the
/// same record name and zone, and archives with `NSKeyedArchiver` (`NSSecureCoding`).
///
/// At the top level under Apple's Objective-C name, for the archiver, as ``CKRecordZoneID``;
/// code writes `CKRecord.ID`.
///
/// `@unchecked Sendable`: immutable, its stored properties are `let`s; `open`, as Apple's, so
/// the compiler cannot check subclasses.
open class CKRecordID: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public let recordName: String
    public let zoneID: CKRecordZone.ID

    /// A record named `recordName` (a new UUID when none is given, as Apple's) in `zoneID`
    /// (the default zone when none is given).
    public init(recordName: String = UUID().uuidString, zoneID: CKRecordZone.ID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    /// The engine's record ID, with the same names.
    convenience init(_ recordID: RecordID) { self.init(recordName: recordID.recordName, zoneID: CKRecordZone.ID(recordID.zoneID)) }

    /// The engine's record ID with the same names.
    var engine: RecordID { RecordID(recordName: recordName, zoneID: zoneID.engine) }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(recordName as NSString, forKey: "RecordName")
        coder.encode(zoneID, forKey: "ZoneID")
    }

    public required init?(coder: NSCoder) {
        guard let name = coder.decodeObject(of: NSString.self, forKey: "RecordName") as String?,
              let zone = coder.decodeObject(of: CKRecordZone.ID.self, forKey: "ZoneID") else { return nil }
        recordName = name
        zoneID = zone
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKRecordID else { return false }
        return other.recordName == recordName && other.zoneID.isEqual(zoneID)
    }

    open override var hash: Int { recordName.hashValue ^ zoneID.hash &* 31 }

    open override var description: String { "<CKRecordID: recordName=\(recordName), zoneID=\(zoneID.zoneName):\(zoneID.ownerName)>" }
}
