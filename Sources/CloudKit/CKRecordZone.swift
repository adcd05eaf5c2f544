import Foundation
import CloudStore

/// A zone as CloudKit code names it, as Apple's class: its ID, what it can do and its
/// encryption scope. It archives with `NSKeyedArchiver` (`NSSecureCoding`).
///
/// `@unchecked Sendable`: `lock` guards `scope`, its one stored property that changes; the
/// others are `let`s; `open`, as Apple's, so the compiler cannot check subclasses.
open class CKRecordZone: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// What a zone can do, as Apple's: a custom zone fetches changes and saves atomically.
    public struct Capabilities: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        public static let fetchChanges = Capabilities(rawValue: 1 << 0)
        public static let atomic = Capabilities(rawValue: 1 << 1)
        public static let sharing = Capabilities(rawValue: 1 << 2)
        public static let zoneWideSharing = Capabilities(rawValue: 1 << 3)

        /// The engine's names of capabilities (`fetchChanges`, `atomic`, …) as a set.
        init(names: [String]) {
            let known: [String: Capabilities] = ["fetchChanges": .fetchChanges, "atomic": .atomic,
                                                 "sharing": .sharing, "zoneWideSharing": .zoneWideSharing]
            self = names.reduce(into: []) { set, name in set.formUnion(known[name] ?? []) }
        }
    }

    /// How the zone's encrypted values are keyed (Apple's numbers). A store here encrypts
    /// nothing on disk; the scope is kept with the zone, and CloudKit's rules for it hold.
    public enum EncryptionScope: Int, Sendable {
        /// A key per record: the default.
        case perRecord = 0
        /// One key for the zone; such a zone is shared only whole (`CKShare(recordZoneID:)`).
        case perZone = 1

        init(_ scope: ZoneEncryptionScope) { self = scope == .perZone ? .perZone : .perRecord }
        var engine: ZoneEncryptionScope { self == .perZone ? .perZone : .perRecord }
    }

    public let zoneID: ID
    /// What the zone can do, as the store reported it; empty for a zone made here and not yet
    /// saved or fetched.
    public let capabilities: Capabilities
    /// The share of the whole zone (`CKShare(recordZoneID:)`), set on a zone fetched or saved
    /// while it has one; nil otherwise, and on a zone made here.
    public let share: CKRecord.Reference?

    public convenience init(zoneName: String) { self.init(zoneID: ID(zoneName: zoneName)) }
    public init(zoneID: ID) {
        self.zoneID = zoneID
        capabilities = []
        share = nil
        scope = .perRecord
    }

    /// Guards `scope`.
    private let lock = NSLock()
    private var scope: EncryptionScope

    /// Set before the zone is first saved; saving a zone that exists with another scope fails
    /// with `invalidArguments`, as a zone's scope never changes.
    open var encryptionScope: EncryptionScope {
        get { lock.withLock { scope } }
        set { lock.withLock { scope = newValue } }
    }

    /// The engine's zone under the ID the caller wrote (by default: owned by
    /// `CKCurrentUserDefaultName`, whatever user record the engine names as its owner).
    init(_ zone: RecordZone, as id: ID? = nil) {
        let zoneID = id ?? ID(zone.zoneID.asCallerWritesIt)
        self.zoneID = zoneID
        capabilities = Capabilities(names: zone.capabilities)
        share = zone.share.map { CKRecord.Reference(recordID: CKRecord.ID(recordName: $0, zoneID: zoneID), action: .none) }
        scope = EncryptionScope(zone.encryptionScope)
    }

    public class func `default`() -> CKRecordZone { CKRecordZone(zoneID: .default) }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(zoneID, forKey: "ZoneID")
        coder.encode(Int64(capabilities.rawValue), forKey: "capabilities")
        coder.encode(share, forKey: "share")
        coder.encode(encryptionScope.rawValue, forKey: "encryptionScope")
    }

    public required init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: ID.self, forKey: "ZoneID") else { return nil }
        zoneID = id
        capabilities = Capabilities(rawValue: UInt(truncatingIfNeeded: coder.decodeInt64(forKey: "capabilities")))
        share = coder.decodeObject(of: CKRecord.Reference.self, forKey: "share")
        scope = coder.containsValue(forKey: "encryptionScope") ? EncryptionScope(rawValue: coder.decodeInteger(forKey: "encryptionScope")) ?? .perRecord : .perRecord
    }

    /// A zone object of its own, with the same ID, capabilities, share and scope (the scope
    /// may be set on the copy alone).
    open func copy(with zone: NSZone? = nil) -> Any {
        CKRecordZone(zoneID: zoneID, capabilities: capabilities, share: share, scope: encryptionScope)
    }

    private init(zoneID: ID, capabilities: Capabilities, share: CKRecord.Reference?, scope: EncryptionScope) {
        self.zoneID = zoneID
        self.capabilities = capabilities
        self.share = share
        self.scope = scope
    }

    /// Equal to a zone of the same ID and capabilities.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKRecordZone else { return false }
        return other.zoneID == zoneID && other.capabilities == capabilities
    }

    open override var hash: Int { zoneID.hash }

    open override var description: String { "<CKRecordZone: \(zoneID.zoneName), capabilities \(capabilities.rawValue)>" }
}
