import Foundation
import CloudStore

/// The record type of shares (`cloudkit.share`).
public let CKRecordTypeShare: CKRecord.RecordType = ShareInfo.recordType
/// The record name of a zone's zone-wide share (`cloudkit.zoneshare`).
public let CKRecordNameZoneWideShare: String = ShareInfo.zoneWideRecordName

/// A share: a record that gives other users of the container its root record's hierarchy
/// (`CKShare(rootRecord:)`) or a whole zone (`CKShare(recordZoneID:)`), with a permission for
/// each participant and, optionally, for anyone who has its URL.
///
/// Save a new hierarchy share and its root record in the same operation. The share's URL is
/// set once it is saved; another user accepts it (``CKAcceptSharesOperation``, or the
/// container's `accept(_:)`) and finds the records in their ``CKContainer/sharedCloudDatabase``.
public final class CKShare: CKRecord, @unchecked Sendable {
    /// Its title, thumbnail and type: the fields a share holds.
    public enum SystemFieldKey {
        public static let title: CKRecord.FieldKey = "cloudkit.title"
        public static let thumbnailImageData: CKRecord.FieldKey = "cloudkit.thumbnailImageData"
        public static let shareType: CKRecord.FieldKey = "cloudkit.type"
    }

    /// Set by the database a share comes from: the user it was fetched for.
    var currentUserRecordName: String?

    /// A share of `rootRecord`'s hierarchy, named with a new UUID.
    public convenience init(rootRecord: CKRecord) {
        self.init(rootRecord: rootRecord, shareID: CKRecord.ID(zoneID: rootRecord.recordID.zoneID))
    }

    /// A share of `rootRecord`'s hierarchy named `shareID` (in the root's zone).
    public init(rootRecord: CKRecord, shareID: CKRecord.ID) {
        var value = Record(recordType: ShareInfo.recordType, recordID: shareID.engine)
        value.shareInfo = ShareInfo(rootRecordName: rootRecord.recordID.recordName)
        super.init(value, assetDirectory: nil)
    }

    /// A share of `rootRecord`'s hierarchy named `shareID` (Apple's other spelling).
    public convenience init(rootRecord: CKRecord, share shareID: CKRecord.ID) { self.init(rootRecord: rootRecord, shareID: shareID) }

    /// A share of the whole zone, named ``CKRecordNameZoneWideShare``.
    public init(recordZoneID: CKRecordZone.ID) {
        var value = Record(recordType: ShareInfo.recordType,
                           recordID: RecordID(recordName: ShareInfo.zoneWideRecordName, zoneID: recordZoneID.engine))
        value.shareInfo = ShareInfo()
        super.init(value, assetDirectory: nil)
    }

    override init(_ record: Record, assetDirectory: String?) { super.init(record, assetDirectory: assetDirectory) }

    public required convenience init?(coder: NSCoder) {
        guard let record = CKRecord(coder: coder), record.record.isShare else { return nil }
        self.init(record.record, assetDirectory: record.assetDirectory)
        func text(_ key: String) -> String? {
            coder.containsValue(forKey: key) ? coder.decodeObject(of: NSString.self, forKey: key) as String? : nil
        }
        containerIdentifier = text(Self.containerKey)
        currentUserRecordName = text(Self.currentUserKey)
    }

    /// The record, and whom and where it was fetched for (its `url` and `currentUserParticipant`).
    public override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        if let containerIdentifier { coder.encode(containerIdentifier as NSString, forKey: Self.containerKey) }
        if let currentUserRecordName { coder.encode(currentUserRecordName as NSString, forKey: Self.currentUserKey) }
    }

    public override func copy(with zone: NSZone? = nil) -> Any {
        let copy = CKShare(record, assetDirectory: assetDirectory)
        copy.containerIdentifier = containerIdentifier
        copy.currentUserRecordName = currentUserRecordName
        return copy
    }

    static let containerKey = "CKShareContainerIdentifier"
    static let currentUserKey = "CKShareCurrentUser"

    var info: ShareInfo { record.shareInfo ?? ShareInfo() }

    /// What anyone with the URL may do; `.none`: only the participants added.
    public var publicPermission: ParticipantPermission {
        get { ParticipantPermission(info.publicPermission) }
        set { update { $0.shareInfo = ($0.shareInfo ?? ShareInfo()).with { $0.publicPermission = newValue.engine } } }
    }

    /// Everyone on the share, the owner first.
    public var participants: [Participant] { info.participants.map { Participant($0) } }

    /// The owner: the user whose zone holds the share (before its first save, the caller).
    public var owner: Participant {
        info.owner.map { Participant($0) }
            ?? Participant(.init(userRecordName: currentUserRecordName ?? CKCurrentUserDefaultName, role: .owner, permission: .readWrite, acceptanceStatus: .accepted))
    }

    /// The caller's own entry, when they are on the share.
    public var currentUserParticipant: Participant? {
        guard let me = currentUserRecordName else { return nil }
        return info.participant(me).map { Participant($0) }
    }

    /// The URL another user accepts the share by; nil until the share is saved.
    public var url: URL? {
        let guid = info.shortGUID
        guard !guid.isEmpty, let container = containerIdentifier else { return nil }
        return URL(string: ShareURL.make(container: container, shortGUID: guid))
    }

    /// Adds a participant (found with ``CKFetchShareParticipantsOperation``, or a one-time
    /// URL's, ``CKShareParticipant/oneTimeURLParticipant()``), or updates the entry of the same
    /// participant.
    public func addParticipant(_ participant: Participant) {
        update { record in
            var info = record.shareInfo ?? ShareInfo()
            if let i = info.participants.firstIndex(where: { $0.id == participant.value.id }) {
                info.participants[i].permission = participant.value.permission
                info.participants[i].role = participant.value.role
                // One who left is invited again.
                if info.participants[i].acceptanceStatus == .removed { info.participants[i].acceptanceStatus = .pending }
            } else {
                info.participants.append(participant.value)
            }
            record.shareInfo = info
        }
    }

    /// Removes a participant; their access ends when the share is saved.
    public func removeParticipant(_ participant: Participant) {
        update { record in
            record.shareInfo = (record.shareInfo ?? ShareInfo()).with { $0.participants.removeAll { $0.id == participant.value.id } }
        }
    }

    public override var description: String { "<CKShare \(recordID.recordName) tag \(recordChangeTag ?? "none")>" }

    /// The container of the database the share came from (nil before its first save).
    var containerIdentifier: String?
}

extension ShareInfo {
    func with(_ change: (inout ShareInfo) -> Void) -> ShareInfo {
        var copy = self
        change(&copy)
        return copy
    }
}

// MARK: Participants

extension CKShare {
    public enum ParticipantAcceptanceStatus: Int, Sendable {
        case unknown = 0, pending = 1, accepted = 2, removed = 3

        init(_ s: ShareInfo.AcceptanceStatus) {
            switch s {
            case .unknown: self = .unknown
            case .pending: self = .pending
            case .accepted: self = .accepted
            case .removed: self = .removed
            }
        }
    }

    public enum ParticipantPermission: Int, Sendable {
        case unknown = 0, none = 1, readOnly = 2, readWrite = 3

        init(_ p: ShareInfo.Permission) {
            switch p {
            case .unknown: self = .unknown
            case .none: self = .none
            case .readOnly: self = .readOnly
            case .readWrite: self = .readWrite
            }
        }

        var engine: ShareInfo.Permission {
            switch self {
            case .unknown: .unknown
            case .none: .none
            case .readOnly: .readOnly
            case .readWrite: .readWrite
            }
        }
    }

    /// The participant's kind, as iOS 10 and 11 named it: ``ParticipantRole`` without
    /// `administrator` (who reads as a private user here). Deprecated by Apple; old sharing
    /// code still reads it.
    public enum ParticipantType: Int, Sendable {
        case unknown = 0, owner = 1, privateUser = 3, publicUser = 4

        init(_ role: ParticipantRole) {
            switch role {
            case .unknown: self = .unknown
            case .owner: self = .owner
            case .administrator, .privateUser: self = .privateUser
            case .publicUser: self = .publicUser
            }
        }

        var role: ParticipantRole {
            switch self {
            case .unknown: .unknown
            case .owner: .owner
            case .privateUser: .privateUser
            case .publicUser: .publicUser
            }
        }
    }

    public enum ParticipantRole: Int, Sendable {
        case unknown = 0, owner = 1, administrator = 2, privateUser = 3, publicUser = 4

        init(_ r: ShareInfo.Role) {
            switch r {
            case .unknown: self = .unknown
            case .owner: self = .owner
            case .administrator: self = .administrator
            case .privateUser: self = .privateUser
            case .publicUser: self = .publicUser
            }
        }

        var engine: ShareInfo.Role {
            switch self {
            case .unknown: .unknown
            case .owner: .owner
            case .administrator: .administrator
            case .privateUser: .privateUser
            case .publicUser: .publicUser
            }
        }
    }

    /// A user's part in a share (``CKShareParticipant``).
    public typealias Participant = CKShareParticipant
}

extension CKUserIdentity {
    /// A participant's identity: their user record ID, and the email address they were found by.
    convenience init(userRecordName: String, emailAddress: String?) {
        self.init(userRecordID: CKRecord.ID(recordName: userRecordName), lookupInfo: emailAddress.map { LookupInfo(emailAddress: $0) },
                  nameComponents: nil, emailAddresses: emailAddress.map { [$0] } ?? [])
    }
}

/// A user's part in a share: who, with which role and permission, and whether they
/// accepted. Found with ``CKFetchShareParticipantsOperation``; equal when of the same user.
/// Apple's `CKShare.Participant`, declared at the top level under its Objective-C name for the
/// archiver, as ``CKRecordID`` is; an `NSObject` with `NSSecureCoding` and `NSCopying`.
///
/// `@unchecked Sendable`: `lock` guards `stored`.
public final class CKShareParticipant: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public typealias Role = CKShare.ParticipantRole
    public typealias Permission = CKShare.ParticipantPermission
    public typealias AcceptanceStatus = CKShare.ParticipantAcceptanceStatus
    public typealias ParticipantType = CKShare.ParticipantType
    public typealias ID = String

    /// Guards `stored`.
    private let lock = NSLock()
    private var stored: ShareInfo.Participant
    var value: ShareInfo.Participant { lock.withLock { stored } }

    required init(_ value: ShareInfo.Participant) { stored = value }

    /// A one-time URL's participant, for whoever first accepts the share through the URL
    /// ``CKShare/oneTimeURL(for:)`` gives once the share is saved with it.
    public class func oneTimeURLParticipant() -> Self {
        Self(ShareInfo.Participant(userRecordName: "", role: .privateUser, permission: .readOnly, acceptanceStatus: .pending,
                                   participantID: UUID().uuidString))
    }

    /// Who the participant is; for a one-time URL's participant not yet claimed, an identity
    /// with no user record ID and no lookup info.
    public var userIdentity: CKUserIdentity {
        let v = value
        guard !v.isUnclaimed else { return CKUserIdentity(userRecordID: nil, lookupInfo: nil, nameComponents: nil, emailAddresses: []) }
        return CKUserIdentity(userRecordName: v.userRecordName, emailAddress: v.emailAddress)
    }
    /// Whether the participant asked for access and the owner then added them.
    public var isApprovedRequester: Bool { value.isApprovedRequester }
    /// When the participant was added to the share; nil before the share is saved with them.
    public var dateAddedToShare: Date? { value.added.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
    public var role: Role {
        get { Role(value.role) }
        set { lock.withLock { stored.role = newValue.engine } }
    }
    /// The participant's role as iOS 10 and 11 named it (deprecated by Apple: use ``role``).
    public var type: ParticipantType {
        get { ParticipantType(role) }
        set { role = newValue.role }
    }
    public var permission: Permission {
        get { Permission(value.permission) }
        set { lock.withLock { stored.permission = newValue.engine } }
    }
    public var acceptanceStatus: AcceptanceStatus { AcceptanceStatus(value.acceptanceStatus) }
    /// The participant's ID on the share: their user record name, or a one-time URL
    /// participant's own ID.
    public var participantID: ID { value.id }

    public func copy(with zone: NSZone? = nil) -> Any { CKShareParticipant(value) }
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKShareParticipant)?.value.id == value.id }
    public override var hash: Int { value.id.hashValue }
    public override var description: String { "<CKShare.Participant \(value.id) \(value.role.rawValue) \(value.permission.rawValue) \(value.acceptanceStatus.rawValue)>" }

    public static var supportsSecureCoding: Bool { true }

    /// The participant as a share's file keeps it: user, role, permission, acceptance, email.
    public func encode(with coder: NSCoder) {
        let v = value
        coder.encode(v.userRecordName as NSString, forKey: "userRecordName")
        coder.encode(v.role.rawValue as NSString, forKey: "role")
        coder.encode(v.permission.rawValue as NSString, forKey: "permission")
        coder.encode(v.acceptanceStatus.rawValue as NSString, forKey: "acceptanceStatus")
        if let email = v.emailAddress { coder.encode(email as NSString, forKey: "emailAddress") }
        if let id = v.participantID { coder.encode(id as NSString, forKey: "participantID") }
        if v.isApprovedRequester { coder.encode(true, forKey: "isApprovedRequester") }
        if let added = v.added { coder.encode(added, forKey: "added") }
    }

    public init?(coder: NSCoder) {
        guard let user = coder.decodeStringIfPresent(forKey: "userRecordName"),
              let role = coder.decodeStringIfPresent(forKey: "role").flatMap(ShareInfo.Role.init(rawValue:)),
              let permission = coder.decodeStringIfPresent(forKey: "permission").flatMap(ShareInfo.Permission.init(rawValue:)),
              let status = coder.decodeStringIfPresent(forKey: "acceptanceStatus").flatMap(ShareInfo.AcceptanceStatus.init(rawValue:))
        else { return nil }
        stored = ShareInfo.Participant(userRecordName: user, role: role, permission: permission, acceptanceStatus: status,
                                       emailAddress: coder.decodeStringIfPresent(forKey: "emailAddress"),
                                       participantID: coder.decodeStringIfPresent(forKey: "participantID"),
                                       isApprovedRequester: coder.decodeBool(forKey: "isApprovedRequester"),
                                       added: coder.containsValue(forKey: "added") ? coder.decodeInt64(forKey: "added") : nil)
    }
}
