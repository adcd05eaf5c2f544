/// What a share grants, kept in its record (of type `cloudkit.share`, as CloudKit's `CKShare`):
/// who takes part, with which permission, and whether they accepted.
///
/// A share covers a hierarchy (its root record and every record whose `parent` chain leads
/// there) or, named `cloudkit.zoneshare`, a whole custom zone of its owner's private database.
public struct ShareInfo: Sendable, Equatable {
    /// The record type of shares.
    public static let recordType = "cloudkit.share"
    /// The record name of a zone's zone-wide share (CloudKit's `CKRecordNameZoneWideShare`).
    public static let zoneWideRecordName = "cloudkit.zoneshare"
    /// The fields a share may hold besides its participants (CloudKit's `CKShare.SystemFieldKey`).
    public static let fieldKeys: Set<String> = ["cloudkit.title", "cloudkit.thumbnailImageData", "cloudkit.type"]

    /// What a participant, or anyone with the share's URL, may do.
    public enum Permission: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case none = "NONE"
        case readOnly = "READ_ONLY"
        case readWrite = "READ_WRITE"
    }

    /// A participant's part: the owner, someone the owner added, someone who joined by the
    /// public URL, or an administrator (kept, but granted no more than a private user:
    /// docs/CloudKitCompatibility.md says what differs from Apple's). The raw
    /// values are Web Services' (`USER` is CloudKit JS's `PRIVATE_USER`, also read).
    public enum Role: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case owner = "OWNER"
        case administrator = "ADMINISTRATOR"
        case privateUser = "USER"
        case publicUser = "PUBLIC_USER"

        /// Reads Web Services' and CloudKit JS's spellings.
        public init?(text: String) {
            self.init(rawValue: text == "PRIVATE_USER" ? "USER" : text)
        }
    }

    /// Whether a participant accepted. The raw values are Web Services' (`INVITED` is
    /// CloudKit JS's `PENDING`, also read).
    public enum AcceptanceStatus: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case pending = "INVITED"
        case accepted = "ACCEPTED"
        case removed = "REMOVED"

        /// Reads Web Services' and CloudKit JS's spellings.
        public init?(text: String) {
            self.init(rawValue: text == "PENDING" ? "INVITED" : text)
        }
    }

    public struct Participant: Sendable, Equatable {
        /// The participant's user record name in the container; empty for a one-time URL's
        /// participant until a user accepts the share through that URL.
        public var userRecordName: String
        public var role: Role
        public var permission: Permission
        public var acceptanceStatus: AcceptanceStatus
        /// How the participant was looked up, when by email address.
        public var emailAddress: String?
        /// The participant's own ID on the share, kept for a one-time URL's participant (whose
        /// user is not known when it is added); nil: the user record name is the ID.
        public var participantID: String?
        /// The secret of a one-time URL's participant, set by the store on the share's save;
        /// only the owner sees it (``ShareInfo/seenByParticipants``).
        public var oneTimeToken: String?
        /// Whether the user asked for access and the owner then added them.
        public var isApprovedRequester: Bool
        /// When the participant was added, in milliseconds since 1970, set by the store.
        public var added: Int64?

        public init(userRecordName: String, role: Role, permission: Permission, acceptanceStatus: AcceptanceStatus,
                    emailAddress: String? = nil, participantID: String? = nil, oneTimeToken: String? = nil,
                    isApprovedRequester: Bool = false, added: Int64? = nil) {
            self.userRecordName = userRecordName
            self.role = role
            self.permission = permission
            self.acceptanceStatus = acceptanceStatus
            self.emailAddress = emailAddress
            self.participantID = participantID
            self.oneTimeToken = oneTimeToken
            self.isApprovedRequester = isApprovedRequester
            self.added = added
        }

        /// The participant's ID on the share: its own, else its user record name.
        public var id: String { participantID ?? userRecordName }

        /// A one-time URL's participant no user has claimed yet.
        public var isUnclaimed: Bool { userRecordName.isEmpty }
    }

    /// A user who asked for access to the share (``ShareInfo/allowsAccessRequests``), or one
    /// the owner blocked from asking.
    public struct Requester: Sendable, Equatable {
        public var userRecordName: String
        /// The user's email address, which finds them as a participant.
        public var emailAddress: String?
        /// When they asked, in milliseconds since 1970 (for a blocked user, when they asked
        /// last).
        public var requested: Int64
        /// The change tag of the share's version their request made: a save by a client that
        /// read an older version keeps the request, which that client never saw.
        public var changeTag: String?

        public init(userRecordName: String, emailAddress: String? = nil, requested: Int64, changeTag: String? = nil) {
            self.userRecordName = userRecordName
            self.emailAddress = emailAddress
            self.requested = requested
            self.changeTag = changeTag
        }
    }

    /// What anyone who opens the share's URL gets; `.none`: only the participants added.
    public var publicPermission: Permission
    public var participants: [Participant]
    /// The part of the share's URL that finds it, set by the store on the first save.
    public var shortGUID: String
    /// The root of the shared hierarchy; nil for a zone-wide share.
    public var rootRecordName: String?
    /// Whether users who are not participants may ask the owner for access (CloudKit's
    /// `allowsAccessRequests`, iOS 26).
    public var allowsAccessRequests: Bool
    /// Who asked for access and waits for the owner's answer.
    public var requesters: [Requester]
    /// Who the owner blocked from asking.
    public var blocked: [Requester]

    public init(publicPermission: Permission = .none, participants: [Participant] = [], shortGUID: String = "",
                rootRecordName: String? = nil, allowsAccessRequests: Bool = false, requesters: [Requester] = [],
                blocked: [Requester] = []) {
        self.publicPermission = publicPermission
        self.participants = participants
        self.shortGUID = shortGUID
        self.rootRecordName = rootRecordName
        self.allowsAccessRequests = allowsAccessRequests
        self.requesters = requesters
        self.blocked = blocked
    }

    /// The participant entry of a user.
    public func participant(_ userRecordName: String) -> Participant? {
        guard !userRecordName.isEmpty else { return nil }
        return participants.first { $0.userRecordName == userRecordName }
    }

    /// The share as a participant sees it: without the requesters, the blocked users and the
    /// one-time URLs' secrets, which are the owner's.
    public var seenByParticipants: ShareInfo {
        var seen = self
        seen.requesters = []
        seen.blocked = []
        for i in seen.participants.indices { seen.participants[i].oneTimeToken = nil }
        return seen
    }

    /// The owner's entry.
    public var owner: Participant? { participants.first { $0.role == .owner } }

    /// What the user may do with the shared records now: nil unless the user accepted (the
    /// owner always has).
    public func grant(for userRecordName: String) -> Permission? {
        guard let p = participant(userRecordName), p.acceptanceStatus == .accepted,
              p.permission == .readOnly || p.permission == .readWrite else { return nil }
        return p.permission
    }

    /// A new short GUID, or one-time URL secret: 26 characters of the URL-safe base32
    /// alphabet.
    static func newShortGUID() -> String {
        String((0..<26).map { _ in "abcdefghijklmnopqrstuvwxyz234567".randomElement()! })
    }
}

extension Record {
    /// The record as a share's participants see it: a share without what only its owner sees
    /// (``ShareInfo/seenByParticipants``); any other record as it is.
    public var seenByParticipants: Record {
        guard let info = shareInfo else { return self }
        var seen = self
        seen.shareInfo = info.seenByParticipants
        return seen
    }
}
