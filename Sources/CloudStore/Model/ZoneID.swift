/// Names a zone: its name and the user record name of its owner.
public struct ZoneID: Hashable, Sendable, CustomStringConvertible {
    /// Every database has this zone; it cannot be deleted.
    public static let defaultZoneName = "_defaultZone"
    /// Stands for the current user where an owner name is asked for (CloudKit's `CKCurrentUserDefaultName`).
    public static let currentUserOwnerName = "__defaultOwner__"
    /// Owner name of the public database's zones.
    package static let publicOwnerName = "_defaultOwner"

    public var zoneName: String
    public var ownerName: String

    public init(zoneName: String = ZoneID.defaultZoneName, ownerName: String = ZoneID.currentUserOwnerName) {
        self.zoneName = zoneName
        self.ownerName = ownerName
    }

    public static let `default` = ZoneID()

    public var isDefaultZone: Bool { zoneName == Self.defaultZoneName }
    public var description: String { zoneName }
}

/// Names a record: its record name and its zone.
public struct RecordID: Hashable, Sendable, CustomStringConvertible {
    public var recordName: String
    public var zoneID: ZoneID

    public init(recordName: String, zoneID: ZoneID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    /// A new record ID with a UUID-based name.
    public init(zoneID: ZoneID = .default) {
        self.init(recordName: UUIDName.make(), zoneID: zoneID)
    }

    public var description: String { recordName }
}

enum UUIDName {
    static func make() -> String {
        var g = SystemRandomNumberGenerator()
        let hex = Array("0123456789ABCDEF")
        var s = ""
        for i in 0..<32 {
            if [8, 12, 16, 20].contains(i) { s.append("-") }
            s.append(hex[Int(g.next() % 16)])
        }
        return s
    }
}
