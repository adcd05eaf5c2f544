import Foundation
import CloudStore

extension CKShare {
    /// What a share's URL tells the user who opens it (``CKShareMetadata``).
    public typealias Metadata = CKShareMetadata
}

/// What a share's URL tells the user who opens it: the share, its root, the owner, and
/// the user's own part in it. Got with ``CKFetchShareMetadataOperation`` or
/// ``CKContainer/shareMetadata(for:)``; accepted with ``CKAcceptSharesOperation``. Apple's
/// `CKShare.Metadata`, declared at the top level under its Objective-C name for the archiver,
/// as ``CKRecordID`` is; an `NSObject` with `NSSecureCoding` and `NSCopying`, so an app can
/// keep one to accept later.
///
/// `@unchecked Sendable`: its stored properties are `let`s.
public final class CKShareMetadata: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public let containerIdentifier: String
    public let share: CKShare
    /// The root of the shared hierarchy; nil for a zone-wide share.
    public let hierarchicalRootRecordID: CKRecord.ID?
    /// The root record, when the fetch asked for it (`shouldFetchRootRecord`).
    public let rootRecord: CKRecord?
    public let participantRole: CKShare.ParticipantRole
    /// The role as iOS 10 and 11 named it (deprecated by Apple: use ``participantRole``).
    public var participantType: CKShare.ParticipantType { CKShare.ParticipantType(participantRole) }
    public let participantStatus: CKShare.ParticipantAcceptanceStatus
    public let participantPermission: CKShare.ParticipantPermission
    public let ownerIdentity: CKUserIdentity
    /// The URL the metadata was fetched for.
    let url: URL

    /// The root record's ID (Apple's older name of ``hierarchicalRootRecordID``; for a
    /// zone-wide share, the share's own ID).
    public var rootRecordID: CKRecord.ID { hierarchicalRootRecordID ?? share.recordID }

    init(url: URL, found: ShareLocation, container: String, user: String, rootRecord: CKRecord?) {
        self.url = url
        containerIdentifier = container
        let record = CKRecord.presented(found.share(seenBy: user), assetDirectory: nil, keepingOwner: true)
        share = record as? CKShare ?? CKShare(found.share, assetDirectory: nil)
        share.currentUserRecordName = user
        share.containerIdentifier = container
        let zone = CKRecordZone.ID(found.zoneID)
        hierarchicalRootRecordID = found.info.rootRecordName.map { CKRecord.ID(recordName: $0, zoneID: zone) }
        self.rootRecord = rootRecord
        // Whoever opens a one-time URL not yet used sees the place it offers.
        let me = found.info.participant(user) ?? found.oneTimeParticipant.flatMap { $0.isUnclaimed ? $0 : nil }
        let isPublic = me == nil && found.info.publicPermission != .none
        participantRole = me.map { CKShare.ParticipantRole($0.role) } ?? (isPublic ? .publicUser : .unknown)
        participantStatus = me.map { CKShare.ParticipantAcceptanceStatus($0.acceptanceStatus) } ?? (isPublic ? .pending : .unknown)
        participantPermission = me.map { CKShare.ParticipantPermission($0.permission) } ?? CKShare.ParticipantPermission(found.info.publicPermission)
        ownerIdentity = CKUserIdentity(userRecordName: found.ownerName, emailAddress: found.info.owner?.emailAddress)
    }

    /// Immutable: the copy is the metadata itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKShareMetadata else { return false }
        return other.url == url && other.share.recordID == share.recordID && other.participantStatus == participantStatus
    }

    public override var hash: Int { url.hashValue }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) {
        coder.encode(url.absoluteString as NSString, forKey: "url")
        coder.encode(containerIdentifier as NSString, forKey: "containerIdentifier")
        coder.encode(share, forKey: "share")
        if let hierarchicalRootRecordID { coder.encode(hierarchicalRootRecordID, forKey: "hierarchicalRootRecordID") }
        if let rootRecord { coder.encode(rootRecord, forKey: "rootRecord") }
        coder.encode(participantRole.rawValue, forKey: "participantRole")
        coder.encode(participantStatus.rawValue, forKey: "participantStatus")
        coder.encode(participantPermission.rawValue, forKey: "participantPermission")
        coder.encode(ownerIdentity, forKey: "ownerIdentity")
    }

    public init?(coder: NSCoder) {
        guard let url = coder.decodeStringIfPresent(forKey: "url").flatMap(URL.init(string:)),
              let container = coder.decodeStringIfPresent(forKey: "containerIdentifier"),
              let share = coder.decodeObjectIfPresent(of: CKShare.self, forKey: "share"),
              let role = CKShare.ParticipantRole(rawValue: coder.decodeInteger(forKey: "participantRole")),
              let status = CKShare.ParticipantAcceptanceStatus(rawValue: coder.decodeInteger(forKey: "participantStatus")),
              let permission = CKShare.ParticipantPermission(rawValue: coder.decodeInteger(forKey: "participantPermission")),
              let owner = coder.decodeObjectIfPresent(of: CKUserIdentity.self, forKey: "ownerIdentity")
        else { return nil }
        self.url = url
        containerIdentifier = container
        self.share = share
        hierarchicalRootRecordID = coder.decodeObjectIfPresent(of: CKRecord.ID.self, forKey: "hierarchicalRootRecordID")
        rootRecord = coder.decodeObjectIfPresent(of: CKRecord.self, forKey: "rootRecord")
        participantRole = role
        participantStatus = status
        participantPermission = permission
        ownerIdentity = owner
    }
}

extension CKContainer {
    /// The metadata of the share `url` names, as the caller sees it; with the root record
    /// when asked (`desiredKeys` limits its fields).
    func shareMetadata(_ url: URL, fetchingRoot: Bool, desiredKeys: [String]?) throws(CKError) -> CKShare.Metadata {
        let container = try engine()
        let user = try container.signedIn(caller, for: "opening a share")
        let found = try container.share(url: url.absoluteString, environment: environment)
        guard Container.mayOpen(found, user: user.userRecordName) else {
            throw CKError(.participantMayNeedVerification, "you are not a participant of share \(url.absoluteString); ask its owner to add you")
        }
        var root: CKRecord?
        if fetchingRoot, let record = try container.shareRoot(found, caller: caller, desiredKeys: desiredKeys, environment: environment) {
            let db = try Database(container: container, scope: .shared, environment: environment, caller: caller, identity: user, owner: found.ownerName)
            root = CKRecord.presented(record, assetDirectory: db.assetDirectory(of: record), keepingOwner: true)
        }
        return CKShare.Metadata(url: url, found: found, container: container.identifier, user: user.userRecordName, rootRecord: root)
    }

    /// Accepts a share as the caller: its records then show in ``sharedCloudDatabase``.
    func acceptShare(_ metadata: CKShare.Metadata) throws(CKError) -> CKShare {
        let container = try engine()
        let found = try container.acceptShare(url: metadata.url.absoluteString, caller: caller, environment: environment)
        let user = try container.userRecordName(for: caller)
        let share = CKShare(found.share(seenBy: user), assetDirectory: nil)
        share.currentUserRecordName = user
        share.containerIdentifier = container.identifier
        return share
    }

    /// A participant for a share, found among the container's users by a lookup.
    func shareParticipant(_ lookup: CKUserIdentity.LookupInfo) throws(CKError) -> CKShare.Participant {
        guard let key = lookup.emailAddress ?? lookup.userRecordID?.recordName else {
            if let phone = lookup.phoneNumber {
                throw CKError(.unknownItem, "no user has phone number \(phone): users here are found by email address or user record ID")
            }
            throw CKError(.invalidArguments, "a lookup names a user by email address or user record ID")
        }
        let found = try engine().identity(named: key)
        return CKShare.Participant(.init(userRecordName: found.userRecordName, role: .privateUser, permission: .readOnly,
                                         acceptanceStatus: .unknown, emailAddress: lookup.emailAddress))
    }

    // MARK: async

    public func shareMetadata(for url: URL) async throws -> CKShare.Metadata {
        try shareMetadata(url, fetchingRoot: false, desiredKeys: nil)
    }

    public func shareMetadatas(for urls: [URL]) async throws -> [URL: Result<CKShare.Metadata, any Error>] {
        each(urls) { (url) throws(CKError) in try shareMetadata(url, fetchingRoot: false, desiredKeys: nil) }
    }

    @discardableResult
    public func accept(_ metadata: CKShare.Metadata) async throws -> CKShare { try acceptShare(metadata) }

    public func accept(_ metadatas: [CKShare.Metadata]) async throws -> [CKShare.Metadata: Result<CKShare, any Error>] {
        each(metadatas) { (metadata) throws(CKError) in try acceptShare(metadata) }
    }

    public func shareParticipant(forEmailAddress emailAddress: String) async throws -> CKShare.Participant {
        try shareParticipant(.init(emailAddress: emailAddress))
    }

    public func shareParticipant(forUserRecordID userRecordID: CKRecord.ID) async throws -> CKShare.Participant {
        try shareParticipant(.init(userRecordID: userRecordID))
    }

    public func shareParticipant(forPhoneNumber phoneNumber: String) async throws -> CKShare.Participant {
        try shareParticipant(.init(phoneNumber: phoneNumber))
    }

    public func shareParticipants(forEmailAddresses emailAddresses: [String]) async throws -> [String: Result<CKShare.Participant, any Error>] {
        participants(emailAddresses) { .init(emailAddress: $0) }
    }

    public func shareParticipants(forPhoneNumbers phoneNumbers: [String]) async throws -> [String: Result<CKShare.Participant, any Error>] {
        participants(phoneNumbers) { .init(phoneNumber: $0) }
    }

    public func shareParticipants(forUserRecordIDs userRecordIDs: [CKRecord.ID]) async throws -> [CKRecord.ID: Result<CKShare.Participant, any Error>] {
        participants(userRecordIDs) { .init(userRecordID: $0) }
    }

    public func shareParticipants(for lookupInfos: [CKUserIdentity.LookupInfo]) async throws -> [CKUserIdentity.LookupInfo: Result<CKShare.Participant, any Error>] {
        participants(lookupInfos) { $0 }
    }

    /// A participant for each key, or why there is none.
    private func participants<Key: Hashable>(_ keys: [Key], _ lookup: (Key) -> CKUserIdentity.LookupInfo) -> [Key: Result<CKShare.Participant, any Error>] {
        each(keys) { (key) throws(CKError) in try shareParticipant(lookup(key)) }
    }

    /// What `work` gives for each key, or why it failed: the shape of every batch call.
    private func each<Key: Hashable, Value>(_ keys: [Key], _ work: (Key) throws(CKError) -> Value) -> [Key: Result<Value, any Error>] {
        var out: [Key: Result<Value, any Error>] = [:]
        for key in keys {
            do throws(CKError) { out[key] = .success(try work(key)) } catch { out[key] = .failure(error) }
        }
        return out
    }

    // MARK: completion handlers

    public func fetchShareParticipant(withPhoneNumber phoneNumber: String, completionHandler: @escaping @Sendable (CKShare.Participant?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.shareParticipant(.init(phoneNumber: phoneNumber)) }
    }

    public func fetchShareParticipants(forEmailAddresses emailAddresses: [String],
                                       completionHandler: @escaping @Sendable (Result<[String: Result<CKShare.Participant, any Error>], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return self.participants(emailAddresses) { .init(emailAddress: $0) }
        }
    }

    public func fetchShareParticipants(forPhoneNumbers phoneNumbers: [String],
                                       completionHandler: @escaping @Sendable (Result<[String: Result<CKShare.Participant, any Error>], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return self.participants(phoneNumbers) { .init(phoneNumber: $0) }
        }
    }

    public func fetchShareParticipants(forUserRecordIDs userRecordIDs: [CKRecord.ID],
                                       completionHandler: @escaping @Sendable (Result<[CKRecord.ID: Result<CKShare.Participant, any Error>], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return self.participants(userRecordIDs) { .init(userRecordID: $0) }
        }
    }

    public func fetchShareMetadatas(for urls: [URL],
                                    completionHandler: @escaping @Sendable (Result<[URL: Result<CKShare.Metadata, any Error>], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return self.each(urls) { (url) throws(CKError) in try self.shareMetadata(url, fetchingRoot: false, desiredKeys: nil) }
        }
    }

    public func accept(_ metadatas: [CKShare.Metadata],
                       completionHandler: @escaping @Sendable (Result<[CKShare.Metadata: Result<CKShare, any Error>], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            _ = try self.engine()
            return self.each(metadatas) { (metadata) throws(CKError) in try self.acceptShare(metadata) }
        }
    }

    public func fetchShareMetadata(with url: URL, completionHandler: @escaping @Sendable (CKShare.Metadata?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.shareMetadata(url, fetchingRoot: false, desiredKeys: nil) }
    }

    public func accept(_ metadata: CKShare.Metadata, completionHandler: @escaping @Sendable (CKShare?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.acceptShare(metadata) }
    }

    public func fetchShareParticipant(withEmailAddress emailAddress: String, completionHandler: @escaping @Sendable (CKShare.Participant?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.shareParticipant(.init(emailAddress: emailAddress)) }
    }

    public func fetchShareParticipant(withUserRecordID userRecordID: CKRecord.ID, completionHandler: @escaping @Sendable (CKShare.Participant?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.shareParticipant(.init(userRecordID: userRecordID)) }
    }
}
