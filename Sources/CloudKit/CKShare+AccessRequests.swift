import Foundation
import CloudStore

// MARK: Access requests (iOS 26)

extension CKShare {
    /// A user who asked for access to the share (``CKShareAccessRequester``).
    public typealias AccessRequester = CKShareAccessRequester
    /// A user the owner blocked from asking (``CKShareBlockedIdentity``).
    public typealias BlockedIdentity = CKShareBlockedIdentity

    /// Whether users who are not participants may ask for access with the share's URL
    /// (``CKContainer/requestShareAccess(for:)``); `false` by default, when such a request
    /// answers as if the share were not there.
    public var allowsAccessRequests: Bool {
        get { info.allowsAccessRequests }
        set { update { $0.shareInfo = ($0.shareInfo ?? ShareInfo()).with { $0.allowsAccessRequests = newValue } } }
    }

    /// Who asked for access and waits for an answer (the owner's copy only). Approve one by
    /// finding their participant with ``CKFetchShareParticipantsOperation`` and the
    /// requester's ``CKShareAccessRequester/participantLookupInfo``, then adding it; deny or
    /// block with ``denyRequesters(_:)`` and ``blockRequesters(_:)``. Save the share after.
    public var requesters: [AccessRequester] { info.requesters.map(AccessRequester.init) }

    /// Who the owner blocked from asking (the owner's copy only).
    public var blockedIdentities: [BlockedIdentity] { info.blocked.map(BlockedIdentity.init) }

    /// Denies requests: the requesters leave ``requesters`` when the share is saved, and may
    /// ask again.
    public func denyRequesters(_ requesters: [AccessRequester]) {
        let names = Set(requesters.map(\.value.userRecordName))
        update { $0.shareInfo = ($0.shareInfo ?? ShareInfo()).with { $0.requesters.removeAll { names.contains($0.userRecordName) } } }
    }

    /// Blocks requesters from asking again; one who is a participant leaves the share. Takes
    /// effect when the share is saved.
    public func blockRequesters(_ requesters: [AccessRequester]) {
        update { record in
            record.shareInfo = (record.shareInfo ?? ShareInfo()).with { info in
                for r in requesters.map(\.value) {
                    info.requesters.removeAll { $0.userRecordName == r.userRecordName }
                    info.participants.removeAll { $0.userRecordName == r.userRecordName }
                    if !info.blocked.contains(where: { $0.userRecordName == r.userRecordName }) { info.blocked.append(r) }
                }
            }
        }
    }

    /// Lets blocked users ask again, once the share is saved.
    public func unblockIdentities(_ blockedIdentities: [BlockedIdentity]) {
        let names = Set(blockedIdentities.map(\.value.userRecordName))
        update { $0.shareInfo = ($0.shareInfo ?? ShareInfo()).with { $0.blocked.removeAll { names.contains($0.userRecordName) } } }
    }

    // MARK: One-time URLs (iOS 18)

    /// The URL that lets one user, whoever first accepts through it, take the place of the
    /// participant `participantID` names (made with
    /// ``CKShareParticipant/oneTimeURLParticipant()``); nil before the share is saved, for
    /// another kind of participant, and for anyone but the owner.
    public func oneTimeURL(for participantID: CKShare.Participant.ID) -> URL? {
        let info = self.info
        guard !info.shortGUID.isEmpty, let container = containerIdentifier,
              let token = info.participants.first(where: { $0.id == participantID })?.oneTimeToken else { return nil }
        return URL(string: ShareURL.oneTime(container: container, shortGUID: info.shortGUID, token: token))
    }
}

/// A user who asked for access to a share: who, and how to find them as a participant.
/// Apple's `CKShare.AccessRequester`, declared at the top level under its Objective-C name
/// for the archiver, as ``CKRecordID`` is.
///
/// `@unchecked Sendable`: immutable; its stored property is a `let`.
public final class CKShareAccessRequester: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    let value: ShareInfo.Requester

    init(_ value: ShareInfo.Requester) { self.value = value }

    /// The requester's identity.
    public var userIdentity: CKUserIdentity { CKUserIdentity(userRecordName: value.userRecordName, emailAddress: value.emailAddress) }

    /// What finds the requester as a participant (``CKFetchShareParticipantsOperation``): their
    /// email address, else their user record ID.
    public var participantLookupInfo: CKUserIdentity.LookupInfo {
        value.emailAddress.map { CKUserIdentity.LookupInfo(emailAddress: $0) }
            ?? CKUserIdentity.LookupInfo(userRecordID: CKRecord.ID(recordName: value.userRecordName))
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKShareAccessRequester)?.value.userRecordName == value.userRecordName }
    public override var hash: Int { value.userRecordName.hashValue }
    public override var description: String { "<CKShare.AccessRequester \(value.userRecordName)>" }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { ShareInfo.Requester.encode(value, with: coder) }

    public init?(coder: NSCoder) {
        guard let value = ShareInfo.Requester.decode(from: coder) else { return nil }
        self.value = value
    }
}

/// A user the owner of a share blocked from asking for access. Apple's
/// `CKShare.BlockedIdentity`, declared at the top level under its Objective-C name for the
/// archiver, as ``CKRecordID`` is.
///
/// `@unchecked Sendable`: immutable; its stored property is a `let`.
public final class CKShareBlockedIdentity: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    let value: ShareInfo.Requester

    init(_ value: ShareInfo.Requester) { self.value = value }

    /// The blocked user's identity.
    public var userIdentity: CKUserIdentity { CKUserIdentity(userRecordName: value.userRecordName, emailAddress: value.emailAddress) }

    public func copy(with zone: NSZone? = nil) -> Any { self }
    public override func isEqual(_ object: Any?) -> Bool { (object as? CKShareBlockedIdentity)?.value.userRecordName == value.userRecordName }
    public override var hash: Int { value.userRecordName.hashValue }
    public override var description: String { "<CKShare.BlockedIdentity \(value.userRecordName)>" }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { ShareInfo.Requester.encode(value, with: coder) }

    public init?(coder: NSCoder) {
        guard let value = ShareInfo.Requester.decode(from: coder) else { return nil }
        self.value = value
    }
}

extension ShareInfo.Requester {
    static func encode(_ value: Self, with coder: NSCoder) {
        coder.encode(value.userRecordName as NSString, forKey: "userRecordName")
        if let email = value.emailAddress { coder.encode(email as NSString, forKey: "emailAddress") }
        coder.encode(value.requested, forKey: "requested")
    }

    static func decode(from coder: NSCoder) -> Self? {
        guard let name = coder.decodeStringIfPresent(forKey: "userRecordName") else { return nil }
        return Self(userRecordName: name, emailAddress: coder.decodeStringIfPresent(forKey: "emailAddress"),
                    requested: coder.decodeInt64(forKey: "requested"))
    }
}
