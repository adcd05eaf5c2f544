import Foundation

/// A share as a user finds it: where it is, and what it holds.
public struct ShareLocation: Sendable {
    /// The share record, as committed.
    public var share: Record
    /// The zone it is in, with its owner's user record name.
    public var zoneID: ZoneID { share.recordID.zoneID }
    public var ownerName: String { zoneID.ownerName }
    public var info: ShareInfo { share.shareInfo ?? ShareInfo() }
    /// The one-time secret of the URL it was found by, when that was a one-time URL.
    public var oneTimeToken: String?

    public init(share: Record, oneTimeToken: String? = nil) {
        self.share = share
        self.oneTimeToken = oneTimeToken
    }

    /// The share record as `user` sees it: whole for its owner, without what only the owner
    /// sees (``ShareInfo/seenByParticipants``) for anyone else.
    public func share(seenBy user: String) -> Record {
        user == ownerName ? share : share.seenByParticipants
    }

    /// The participant the one-time URL it was found by stands for.
    public var oneTimeParticipant: ShareInfo.Participant? {
        guard let token = oneTimeToken else { return nil }
        return info.participants.first { $0.oneTimeToken == token }
    }
}

/// One user's shared database: the zones and records other users of the container share
/// with them, each in its owner's private database (`Database` of scope `.shared`, one per
/// owner). A zone appears once the user accepted a share in it, and goes when the share is
/// deleted or the user removed. Safe to share between threads.
public final class SharedDatabase: Sendable {
    public let container: Container
    public let caller: Caller
    public let identity: Identity
    public let environment: Environment

    init(container: Container, caller: Caller, identity: Identity, environment: Environment) {
        self.container = container
        self.caller = caller
        self.identity = identity
        self.environment = environment
    }

    public var userRecordName: String { identity.userRecordName }

    /// The zones of `owner` as the caller reaches them through shares.
    public func database(owner: String) throws(CKError) -> Database {
        guard owner != userRecordName, owner != ZoneID.currentUserOwnerName, !owner.isEmpty else {
            throw .invalid("zones in the shared database are named with their owner's user record name; your own zones are in your private database")
        }
        return try Database(container: container, scope: .shared, environment: environment, caller: caller, identity: identity, owner: owner)
    }

    /// The zones shared with the caller that they accepted, by owner then name
    /// (`includingShare`: as ``Database/zone(_:includingShare:)``). An owner is a participant of
    /// their own shares, but their zones are in their private database, never here.
    public func zones(includingShare: Bool = false) throws(CKError) -> [RecordZone] {
        var zones: [RecordZone] = []
        var seen: Set<ZoneID> = []
        for found in try container.shares(environment: environment)
        where found.ownerName != userRecordName && found.info.grant(for: userRecordName) != nil {
            guard seen.insert(found.zoneID).inserted else { continue }
            // Its grant was just read from the share itself.
            let db = try database(owner: found.ownerName)
            guard let zone = try? db.storedZone(found.zoneID.zoneName, includingShare: includingShare) else { continue }
            zones.append(zone)
        }
        return zones.sorted { ($0.zoneID.ownerName, $0.zoneID.zoneName) < ($1.zoneID.ownerName, $1.zoneID.zoneName) }
    }

    /// Fetches records by ID (zone IDs name their owners): one result per ID, in order.
    public func fetch(_ ids: [RecordID], desiredKeys: [String]? = nil) -> [(RecordID, Result<Record, CKError>)] {
        ids.map { id in
            do throws(CKError) {
                return try database(owner: id.zoneID.ownerName).fetch([id], desiredKeys: desiredKeys)[0]
            } catch {
                return (id, .failure(error))
            }
        }
    }

    /// Saves and deletes records across the owners' zones; item errors are in the result.
    public func modify(saving: [Record], deleting: [RecordID] = [], options: ModifyOptions = ModifyOptions()) throws(CKError) -> ModifyResult {
        var owners: [String] = []
        for o in saving.map(\.recordID.zoneID.ownerName) + deleting.map(\.zoneID.ownerName) where !owners.contains(o) { owners.append(o) }
        var saves = [(RecordID, Result<Record, CKError>)?](repeating: nil, count: saving.count)
        var deletes = [(RecordID, Result<Void, CKError>)?](repeating: nil, count: deleting.count)
        var notificationErrors: [CKError] = []
        for owner in owners {
            let si = saving.indices.filter { saving[$0].recordID.zoneID.ownerName == owner }
            let di = deleting.indices.filter { deleting[$0].zoneID.ownerName == owner }
            do throws(CKError) {
                let result = try database(owner: owner).modify(saving: si.map { saving[$0] }, deleting: di.map { deleting[$0] }, options: options)
                for (k, i) in si.enumerated() { saves[i] = result.saveResults[k] }
                for (k, i) in di.enumerated() { deletes[i] = result.deleteResults[k] }
                notificationErrors += result.notificationErrors
            } catch {
                for i in si { saves[i] = (saving[i].recordID, .failure(error)) }
                for i in di { deletes[i] = (deleting[i], .failure(error)) }
            }
        }
        return ModifyResult(saveResults: saves.map { $0! }, deleteResults: deletes.map { $0! }, notificationErrors: notificationErrors)
    }

    /// The caller's subscriptions of their shared database (database subscriptions only, as
    /// CloudKit's), kept in their own file, not in any owner's.
    public var subscriptions: Database {
        get throws(CKError) {
            try Database(container: container, scope: .shared, environment: environment, caller: caller, identity: identity, owner: userRecordName)
        }
    }

    /// Changes in one shared zone since `token`, only of the records shared with the caller.
    public func changes(in zoneID: ZoneID, since token: ChangeToken?, limit: Int? = nil, desiredKeys: [String]? = nil) throws(CKError) -> ZoneChanges {
        try database(owner: zoneID.ownerName).changes(in: zoneID.zoneName, since: token, limit: limit, desiredKeys: desiredKeys)
    }

    /// The shared zones that changed since `token` (nil: every one); a zone whose share ended
    /// for the caller is reported deleted.
    public func databaseChanges(since token: DatabaseChangeToken?, limit: Int? = nil) throws(CKError) -> DatabaseChanges {
        if let limit, limit < 1 { throw CKError(.invalidArguments, "a database change fetch's limit must be at least 1, not \(limit)") }
        var now: [String: ChangeToken] = [:]
        var ids: [String: ZoneID] = [:]
        for zone in try zones() {
            let key = zone.zoneID.ownerName + ":" + zone.zoneID.zoneName
            guard let t = try? database(owner: zone.zoneID.ownerName).storedChangeToken(in: zone.zoneID.zoneName) else { continue }
            now[key] = t
            ids[key] = zone.zoneID
        }
        // Keys are `<owner>:<zone>`: owner names hold no colon.
        return DatabaseChanges(from: token, to: now, limit: limit) { key in
            if let id = ids[key] { return id }
            let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
            return ZoneID(zoneName: parts.count == 2 ? parts[1] : key, ownerName: parts.first ?? "")
        }
    }
}

// MARK: Finding and accepting shares

extension Container {
    /// The caller's shared database; an account is needed.
    public func sharedDatabase(caller: Caller, environment: Environment = .development) throws(CKError) -> SharedDatabase {
        let u = try signedIn(caller, for: "the shared database")
        return SharedDatabase(container: self, caller: caller, identity: u, environment: environment)
    }

    /// Every share in the private databases of the container's users, read from the zones
    /// the share registry names (`shared-zones.json`).
    public func shares(environment: Environment = .development) throws(CKError) -> [ShareLocation] {
        var found: [ShareLocation] = []
        var databases: [String: Database] = [:]
        for entry in try ShareRegistry(container: self, environment: environment).entries() {
            let db: Database
            if let known = databases[entry.owner] { db = known } else {
                db = try Database(container: self, scope: .shared, environment: environment, caller: .noAccount(), identity: nil, owner: entry.owner)
                databases[entry.owner] = db
            }
            for share in try db.shareRecords(in: entry.zone) { found.append(ShareLocation(share: share)) }
        }
        return found
    }

    /// The share a URL or short GUID names; `unknownItem` when there is none.
    public func share(url: String, environment: Environment = .development) throws(CKError) -> ShareLocation {
        let (guid, token) = ShareURL.parts(of: url)
        guard var found = try shares(environment: environment).first(where: { $0.info.shortGUID == guid }) else {
            throw CKError(.unknownItem, "no share has URL \(url) in container \(identifier) (\(environment.rawValue)); the share may have been deleted, or the URL is of another container or environment")
        }
        if let token {
            guard found.info.participants.contains(where: { $0.oneTimeToken == token }) else {
                throw CKError(.unknownItem, "share URL \(url) is a one-time URL whose participant is no longer on the share; ask the share's owner for a new one")
            }
            found.oneTimeToken = token
        }
        return found
    }

    /// Accepts the share `url` names as `caller`: a participant the owner added becomes
    /// `ACCEPTED`; with a public permission anyone may join, as a public user. The share's
    /// zone then shows in the caller's shared database.
    @discardableResult
    public func acceptShare(url: String, caller: Caller, environment: Environment = .development) throws(CKError) -> ShareLocation {
        let user = try signedIn(caller, for: "accepting a share")
        let found = try share(url: url, environment: environment)
        guard found.ownerName != user.userRecordName else { return found }
        let db = try Database(container: self, scope: .shared, environment: environment, caller: caller, identity: user, owner: found.ownerName)
        let accepted = try db.rewriteShare(found.share.recordID.recordName, in: found.zoneID.zoneName) { (info: inout ShareInfo, _) throws(CKError) in
            if info.blocked.contains(where: { $0.userRecordName == user.userRecordName }) {
                throw CKError(.permissionFailure, "the owner of share \(url) blocked you from it")
            }
            // A one-time URL's participant becomes the user who accepts through it first.
            if let token = found.oneTimeToken, info.participant(user.userRecordName) == nil,
               let i = info.participants.firstIndex(where: { $0.oneTimeToken == token }) {
                guard info.participants[i].isUnclaimed else {
                    throw CKError(.permissionFailure, "one-time URL \(url) was used by another user already; ask the share's owner for a URL of your own")
                }
                info.participants[i].userRecordName = user.userRecordName
                info.participants[i].emailAddress = user.emails.first
            }
            let isPublic = info.publicPermission == .readOnly || info.publicPermission == .readWrite
            if let i = info.participants.firstIndex(where: { $0.userRecordName == user.userRecordName }) {
                if info.participants[i].acceptanceStatus == .removed {
                    // One who left comes back only as anyone with the URL of a public share
                    // does: a public user with the share's public permission, not the one held before.
                    guard isPublic else {
                        throw CKError(.permissionFailure, "you were removed from share \(url); ask its owner to add you again")
                    }
                    info.participants[i].role = .publicUser
                    info.participants[i].permission = info.publicPermission
                }
                info.participants[i].acceptanceStatus = .accepted
            } else {
                guard isPublic else {
                    throw CKError(.permissionFailure, "you are not a participant of share \(url); ask its owner to add you (ckfs share add-participant)")
                }
                guard info.participants.count < Database.maxParticipants else {
                    throw CKError(.tooManyParticipants, "share \(url) has \(Database.maxParticipants) participants already, the most a share may have")
                }
                info.participants.append(.init(userRecordName: user.userRecordName, role: .publicUser, permission: info.publicPermission,
                                               acceptanceStatus: .accepted, emailAddress: user.emails.first))
            }
        }
        return ShareLocation(share: accepted)
    }
}

extension Database {
    /// Changes a share's participants on a participant's behalf (accepting it), committed to
    /// the owner's zone as any save is, the owner's subscriptions told.
    /// `change` gets the share's participants as stored and the change tag its new version
    /// will have.
    func rewriteShare(_ name: String, in zone: String, _ change: (inout ShareInfo, String) throws(CKError) -> Void) throws(CKError) -> Record {
        let storage = zoneStorage(zone)
        var watching: [Subscription] = []
        var before: [String: Record] = [:]
        var committedEntry: LogEntry?
        let written = try storage.write { (txn) throws(CKError) -> (LogEntry?, Record) in
            watching = (try? subscriptionsWatching(zone)) ?? []
            guard let share = try txn.record(name), var info = share.shareInfo else {
                throw CKError(.unknownItem, "share \(name) no longer exists in zone \(zone)")
            }
            let old = info
            let tag = String(txn.lastSeq + 1)
            try change(&info, tag)
            guard info != old else { return (nil, share) }
            before[name] = share
            let now = Store.now()
            var record = share
            record.shareInfo = info
            record.recordChangeTag = tag
            record.modified = Stamp(timestamp: now, userRecordName: userRecordName, deviceID: caller.deviceID)
            let entry = LogEntry(seq: 0, time: now, userRecordName: userRecordName, deviceID: caller.deviceID, clientChangeToken: nil,
                                 saved: [record], deleted: [], usage: txn.usage)
            return (entry, record)
        } committed: { (entry) in
            committedEntry = entry
            if !watching.isEmpty { try? self.notify(watching, zone: zone, entry: entry, before: before) }
        }
        if let committedEntry { notifyParticipants(zone, entry: committedEntry) }
        return written
    }
}

/// A share's URL: `ckfs://<container>/share/<short GUID>`; the short GUID alone also names it.
/// A one-time URL adds its participant's secret: `…/share/<short GUID>?oneTime=<secret>`.
public enum ShareURL {
    public static func make(container: String, shortGUID: String) -> String { "ckfs://\(container)/share/\(shortGUID)" }

    public static func oneTime(container: String, shortGUID: String, token: String) -> String {
        make(container: container, shortGUID: shortGUID) + "?oneTime=" + token
    }

    /// The short GUID a URL names, and the one-time secret it holds, if any.
    static func parts(of url: String) -> (shortGUID: String, oneTimeToken: String?) {
        var rest = Substring(url)
        var token: String?
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...]
            rest = rest[..<q]
            for item in query.split(separator: "&") where item.hasPrefix("oneTime=") { token = String(item.dropFirst("oneTime=".count)) }
        }
        return (rest.split(separator: "/").last.map(String.init) ?? String(rest), token)
    }
}

// MARK: Asking for access

extension Container {
    /// Asks the owner of the share `url` names for access, as `caller` (CloudKit's
    /// `requestShareAccess(for:)`, iOS 26): the caller joins the share's requesters, for its
    /// owner to add, deny or block. A share that does not allow requests answers as if it were
    /// not there, as CloudKit's; asking again, or as a participant, changes nothing.
    public func requestShareAccess(url: String, caller: Caller, environment: Environment = .development) throws(CKError) {
        let user = try signedIn(caller, for: "asking for access to a share")
        let found = try share(url: url, environment: environment)
        guard found.ownerName != user.userRecordName else { return }
        let notThere = CKError(.unknownItem, "no share has URL \(url) that takes access requests in container \(identifier) (\(environment.rawValue)); ask its owner to invite you, or to allow access requests")
        guard found.info.allowsAccessRequests else { throw notThere }
        let db = try Database(container: self, scope: .shared, environment: environment, caller: caller, identity: user, owner: found.ownerName)
        _ = try db.rewriteShare(found.share.recordID.recordName, in: found.zoneID.zoneName) { (info: inout ShareInfo, tag) throws(CKError) in
            guard info.allowsAccessRequests else { throw notThere }
            guard !info.blocked.contains(where: { $0.userRecordName == user.userRecordName }) else {
                throw CKError(.permissionFailure, "the owner of share \(url) blocked you from asking for access")
            }
            if let me = info.participant(user.userRecordName), me.acceptanceStatus != .removed { return }
            guard !info.requesters.contains(where: { $0.userRecordName == user.userRecordName }) else { return }
            info.requesters.append(.init(userRecordName: user.userRecordName, emailAddress: user.emails.first, requested: Store.now(), changeTag: tag))
        }
    }
}

// MARK: Shares as their owner makes them

extension Container {
    /// Shares record `root`'s hierarchy (nil: the whole zone) of `zone` in the caller's private
    /// database, with `publicPermission` for anyone who has its URL; `allowsAccessRequests`
    /// lets other users ask for access.
    @discardableResult
    public func createShare(root: String?, zone: String, caller: Caller, publicPermission: ShareInfo.Permission = .none,
                            title: String? = nil, allowsAccessRequests: Bool = false, environment: Environment = .development) throws(CKError) -> ShareLocation {
        let db = try database(.private, caller: caller, environment: environment)
        let name = root == nil ? ShareInfo.zoneWideRecordName : "Share-" + UUIDName.make()
        var share = Record(recordType: ShareInfo.recordType, recordID: RecordID(recordName: name, zoneID: db.zoneID(zone)))
        share.shareInfo = ShareInfo(publicPermission: publicPermission, rootRecordName: root, allowsAccessRequests: allowsAccessRequests)
        if let title { share["cloudkit.title"] = .string(title) }
        return ShareLocation(share: try db.save(share))
    }

    /// Changes the participants of the share `url` names, as its owner: `change` gets them as
    /// stored.
    @discardableResult
    public func changeShare(url: String, caller: Caller, environment: Environment = .development,
                            _ change: (inout ShareInfo) throws(CKError) -> Void) throws(CKError) -> ShareLocation {
        let found = try share(url: url, environment: environment)
        let db = try database(.private, caller: caller, environment: environment)
        guard db.userRecordName == found.ownerName else {
            throw CKError(.permissionFailure, "share \(url) belongs to another user; only its owner may change it")
        }
        var share = found.share
        var info = found.info
        try change(&info)
        share.shareInfo = info
        return ShareLocation(share: try db.save(share))
    }

    /// The identity a participant argument names: an identity's name, one of its email
    /// addresses, or its user record name.
    public func identity(named text: String) throws(CKError) -> Identity {
        let info = try fresh()
        guard let found = info.users[text] ?? info.identity(userRecordName: text) ?? info.identity(email: text) else {
            throw CKError(.unknownItem, "no user of container \(identifier) is named \(text) or has that email address or user record name (ckfs user list shows them)")
        }
        return found
    }
}

extension Container {
    /// Whether `user` may open the share (see its metadata): its owner, a participant not
    /// removed, anyone when it has a public permission, or anyone with a one-time URL not used
    /// by another user; never a user the owner blocked.
    public static func mayOpen(_ found: ShareLocation, user: String) -> Bool {
        if found.info.blocked.contains(where: { $0.userRecordName == user }) { return false }
        if let slot = found.oneTimeParticipant, slot.isUnclaimed || slot.userRecordName == user { return true }
        return found.ownerName == user || found.info.participant(user).map { $0.acceptanceStatus != .removed } == true
            || found.info.publicPermission == .readOnly || found.info.publicPermission == .readWrite
    }

    /// The root record of a share, as the metadata of a share shows it to a user who may open
    /// it, before they accept; nil for a zone-wide share or a root gone meanwhile.
    public func shareRoot(_ found: ShareLocation, caller: Caller, desiredKeys: [String]? = nil,
                          environment: Environment = .development) throws(CKError) -> Record? {
        let user = try signedIn(caller, for: "opening a share")
        guard Self.mayOpen(found, user: user.userRecordName) else {
            throw CKError(.permissionFailure, "you are not a participant of this share; ask its owner to add you")
        }
        guard let root = found.info.rootRecordName else { return nil }
        let db = try Database(container: self, scope: .shared, environment: environment, caller: caller, identity: user, owner: found.ownerName)
        return try db.zoneStorage(found.zoneID.zoneName).record(named: root)?.limited(to: desiredKeys)
    }
}
