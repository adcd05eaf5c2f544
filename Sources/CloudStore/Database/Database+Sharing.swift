import Foundation

/// What one user may reach in one zone of an owner's private database, from the zone's
/// shares: the whole zone (a zone-wide share), or hierarchies by their root records.
struct ZoneGrants: Sendable {
    /// The permission a zone-wide share gives, when the user accepted one.
    var zone: ShareInfo.Permission?
    /// Root record name → the permission its share gives.
    var roots: [String: ShareInfo.Permission] = [:]
    /// The shares the user takes part in (accepted), by record name: a participant reads them.
    var shares: Set<String> = []

    var isEmpty: Bool { zone == nil && roots.isEmpty }
}

/// What one participant reaches in one shared zone, as the zone's shares said when it was
/// read: which records, with what permission, and how each shows to them.
public struct ShareAccess: Sendable {
    let grants: ZoneGrants

    /// The permission a zone-wide share gives; nil when only hierarchies are shared.
    public var wholeZone: ShareInfo.Permission? { grants.zone }

    /// Whether some share of the zone lets the participant change records.
    public var writesSomewhere: Bool { grants.zone == .readWrite || grants.roots.values.contains(.readWrite) }

    /// What the participant may do with `record` (each parent read with `lookUp`); nil when it
    /// is not shared with them.
    public func permission(of record: Record, lookUp: (String) throws(CKError) -> Record?) throws(CKError) -> ShareInfo.Permission? {
        try Database.permission(of: record, grants, lookUp: lookUp)
    }

    /// `record` as the participant sees it: a shared hierarchy's root shows no `parent`, which
    /// names a record not shared, and a share shows no requesters, blocked users or one-time
    /// secrets, which are its owner's.
    public func shown(_ record: Record) -> Record {
        if record.isShare { return record.seenByParticipants }
        guard record.share != nil, record.parent != nil, grants.zone == nil else { return record }
        var shown = record
        shown.parent = nil
        shown.clearChangedKeys()
        return shown
    }
}

extension Database {
    /// The most records a `parent` chain is followed through.
    static let maxHierarchyDepth = 4_096
    /// CloudKit's limit on a share's participants, the owner included.
    static let maxParticipants = 100

    /// The share records of a zone, as committed; none in a zone that does not exist.
    func shareRecords(in zone: String) throws(CKError) -> [Record] {
        guard zoneStorage(zone).exists else { return [] }
        var found: [Record] = []
        var after: CursorPosition?
        while true {
            let page = try page(of: RecordQuery(recordType: ShareInfo.recordType), in: zone, limit: 200, after: after)
            found += page.entries.map(\.record)
            guard page.more, let last = page.entries.last else { return found }
            after = CursorPosition(recordName: last.name, values: [])
        }
    }

    /// What `userRecordName` may reach in `zone` through the given share records.
    static func grants(of userRecordName: String, from shares: [Record]) -> ZoneGrants {
        var grants = ZoneGrants()
        for share in shares {
            guard let info = share.shareInfo, let permission = info.grant(for: userRecordName) else { continue }
            grants.shares.insert(share.recordID.recordName)
            if let root = info.rootRecordName { grants.roots[root] = permission } else { grants.zone = permission }
        }
        return grants
    }

    /// The caller's grants in `zone` of this shared database, read under the zone's write lock
    /// with `lookUp` (the share records are found before, then read again as committed).
    func grants(in zone: String, shareNames: [String], lookUp: (String) throws(CKError) -> Record?) throws(CKError) -> ZoneGrants {
        var shares: [Record] = []
        for name in shareNames { if let r = try lookUp(name) { shares.append(r) } }
        return Self.grants(of: userRecordName, from: shares)
    }

    /// What the grants allow on `record`: the zone's permission, else that of the first root
    /// met going up its `parent` chain (each parent read with `lookUp`); a share the user takes
    /// part in reads only. nil: the record is not shared with the user.
    static func permission(of record: Record, _ grants: ZoneGrants,
                           lookUp: (String) throws(CKError) -> Record?) throws(CKError) -> ShareInfo.Permission? {
        if let zone = grants.zone { return zone }
        if record.isShare { return grants.shares.contains(record.recordID.recordName) ? .readOnly : nil }
        var current = record
        for _ in 0..<maxHierarchyDepth {
            if let p = grants.roots[current.recordID.recordName] { return p }
            guard let parent = current.parent, let next = try lookUp(parent) else { return nil }
            current = next
        }
        return nil
    }

    /// The caller's grants in `zone` of this shared database as committed now; `zoneNotFound`
    /// when it shares nothing there with them.
    func currentGrants(_ zone: String) throws(CKError) -> ZoneGrants {
        let grants = Self.grants(of: userRecordName, from: try shareRecords(in: zone))
        guard !grants.isEmpty else {
            throw CKError(.zoneNotFound, "zone \(zone) of \(ownerName) is not shared with you, or you have not accepted its share")
        }
        return grants
    }

    /// The caller's grants in `zone` when this is a shared database, else nil: read once by a
    /// call that filters several times.
    func sharedGrants(_ zone: String) throws(CKError) -> ZoneGrants? {
        scope == .shared ? try currentGrants(zone) : nil
    }

    /// Of `records` of `zone`, those shared with the caller (all of them outside a shared
    /// database); a shared hierarchy's root shows no `parent`, which names a record not shared.
    /// `grants`: the caller's, when already read.
    func visible(_ records: [Record], in zone: String, grants known: ZoneGrants? = nil) throws(CKError) -> [Record] {
        guard scope == .shared else { return records }
        let grants: ZoneGrants
        if let known { grants = known } else { grants = try currentGrants(zone) }
        let storage = zoneStorage(zone)
        let access = ShareAccess(grants: grants)
        var kept: [Record] = []
        for r in records where try Self.permission(of: r, grants, lookUp: storage.record(named:)) != nil {
            kept.append(access.shown(r))
        }
        return kept
    }

    /// What the caller reaches in `zone` of this shared database as committed now, for a
    /// reader that holds the zone's records itself (the mount's view); `zoneNotFound` when it
    /// shares nothing there with them.
    public func shareAccess(in zone: String) throws(CKError) -> ShareAccess {
        guard scope == .shared else { throw .invalid("share access is asked of a shared database, not the \(scope.rawValue) one") }
        return ShareAccess(grants: try currentGrants(zone))
    }

    /// Of the names deleted in `zone`, those that were in a hierarchy shared with the caller,
    /// by the shared root each deletion's log entry names (`roots`).
    func visibleDeletions(_ deleted: [RecordID], roots: [String: String], in zone: String, grants known: ZoneGrants? = nil) throws(CKError) -> [RecordID] {
        guard scope == .shared else { return deleted }
        let grants: ZoneGrants
        if let known { grants = known } else { grants = try currentGrants(zone) }
        return deleted.filter { Self.wasShared(grants, root: roots[$0.recordName]) }
    }

    /// Whether a deleted record, in the hierarchy of `root` when deleted, is one `grants` reach.
    static func wasShared(_ grants: ZoneGrants, root: String?) -> Bool {
        grants.zone != nil || root.map { grants.roots[$0] != nil } == true
    }

    /// The root of the shared hierarchy `record` is in: itself or the nearest ancestor that is
    /// a share's root; nil when none is.
    static func sharedRoot(of record: Record, lookUp: (String) throws(CKError) -> Record?) throws(CKError) -> String? {
        var current = record
        for _ in 0..<maxHierarchyDepth {
            if current.share != nil { return current.recordID.recordName }
            guard let parent = current.parent, let next = try lookUp(parent) else { return nil }
            current = next
        }
        return nil
    }

    /// The error for a save the caller may not make in a shared zone.
    func outsideShares(_ name: String) -> CKError { policy.outsideShares(name) }

    /// The error for a record the caller cannot reach in a shared zone: it is not there for them.
    func notShared(_ name: String, zone: String) -> CKError { policy.notShared(name, zone: zone) }

    /// The share a save writes: the client's participants checked against the container's
    /// users and the share as stored, the owner first and accepted, the short GUID and root
    /// kept from the stored share, one-time URLs' participants given their secrets, and the
    /// stored requesters answered (added, denied or blocked) as the client's copy says.
    func preparedShare(_ record: Record, client: Record, server: Record?, zone: String) throws(CKError) -> Record {
        let name = record.recordID.recordName
        try policy.mayChangeShare(name)
        guard zone != ZoneID.defaultZoneName else {
            throw .invalid("share \(name) cannot be saved in the default zone: records are shared from a custom zone of the private database (create one with ckfs zone create)")
        }
        let old = server?.shareInfo
        var info = client.shareInfo ?? old ?? ShareInfo()
        if let kept = old?.shortGUID, !kept.isEmpty { info.shortGUID = kept } else { info.shortGUID = ShareInfo.newShortGUID() }
        if name == ShareInfo.zoneWideRecordName {
            info.rootRecordName = nil
        } else {
            info.rootRecordName = old?.rootRecordName ?? client.shareInfo?.rootRecordName
            guard info.rootRecordName != nil else {
                throw .invalid("share \(name) names no root record: save it with its root record in the same operation (CKShare(rootRecord:), or \"rootRecordName\" in its file), or name it \(ShareInfo.zoneWideRecordName) to share the whole zone")
            }
        }
        let users = try container.fresh()
        let now = record.modified?.timestamp ?? Store.now()
        // Blocked users: the owner's list, of users of the container; blocking one takes them
        // off the share.
        var blocked: [ShareInfo.Requester] = []
        for b in info.blocked where !blocked.contains(where: { $0.userRecordName == b.userRecordName }) {
            guard b.userRecordName != ownerName else {
                throw .invalid("share \(name): its owner (\(ownerName)) cannot be blocked from it")
            }
            guard users.identity(userRecordName: b.userRecordName) != nil else {
                throw .invalid("share \(name): blocked user \(b.userRecordName) is not a user of container \(container.identifier) (ckfs user list)")
            }
            blocked.append(b)
        }
        let blockedNames = Set(blocked.map(\.userRecordName))
        var participants = [ShareInfo.Participant(userRecordName: ownerName, role: .owner, permission: .readWrite, acceptanceStatus: .accepted,
                                                  emailAddress: old?.owner?.emailAddress, added: old?.owner?.added ?? now)]
        var seen: Set<String> = [ownerName]
        var seenIDs: Set<String> = [ownerName]
        for p in info.participants where p.userRecordName != ownerName {
            guard p.role != .owner else {
                throw .invalid("share \(name): participant \(p.id) cannot be an owner; a share has one owner, the user whose zone it is in")
            }
            guard !p.id.isEmpty else {
                throw .invalid("share \(name) lists a participant with no user: give it \"userIdentity\": {\"userRecordName\"} (ckfs user list), or a \"participantId\" for a one-time URL's participant")
            }
            guard seenIDs.insert(p.id).inserted else {
                throw .invalid("share \(name) lists participant \(p.id) twice; list each participant once")
            }
            guard p.permission == .readOnly || p.permission == .readWrite else {
                throw .invalid("share \(name): participant \(p.id) needs permission READ_ONLY or READ_WRITE, not \(p.permission.rawValue)")
            }
            var kept = p
            let stored = old?.participants.first { $0.id == p.id }
            if p.participantID != nil {
                // A one-time URL's participant: who claimed it, and its secret, are the store's.
                kept.userRecordName = stored?.userRecordName ?? ""
                kept.emailAddress = stored?.emailAddress
                kept.oneTimeToken = stored?.oneTimeToken ?? ShareInfo.newShortGUID()
            } else {
                guard users.identity(userRecordName: p.userRecordName) != nil else {
                    throw .invalid("share \(name): participant \(p.userRecordName) is not a user of container \(container.identifier); find participants by email or user record name (ckfs user list)")
                }
                kept.oneTimeToken = nil
            }
            if !kept.isUnclaimed {
                guard seen.insert(kept.userRecordName).inserted else {
                    throw .invalid("share \(name) lists participant \(kept.userRecordName) twice; list each user once")
                }
                if blockedNames.contains(kept.userRecordName) { continue }
            }
            // Only the participant accepts: an entry keeps the status stored for it. One who
            // left stays out while the owner's copy says so too; an entry the owner gives
            // another status (added again) is invited again.
            switch stored?.acceptanceStatus {
            case .removed?: kept.acceptanceStatus = p.acceptanceStatus == .removed ? .removed : .pending
            case let status?: kept.acceptanceStatus = status
            case nil: kept.acceptanceStatus = .pending
            }
            if kept.role == .unknown { kept.role = .privateUser }
            kept.added = stored?.added ?? now
            kept.isApprovedRequester = stored?.isApprovedRequester
                ?? (!kept.isUnclaimed && old?.requesters.contains { $0.userRecordName == kept.userRecordName } == true)
            participants.append(kept)
        }
        guard participants.count <= Self.maxParticipants else {
            throw CKError(.tooManyParticipants, "share \(name) has \(participants.count) participants; a share may have at most \(Self.maxParticipants), its owner included")
        }
        // Requesters are the store's: a save answers them (a requester added as a participant,
        // denied by leaving them out, or blocked) and cannot add any. One who asked after the
        // version the client read is kept, unanswered.
        let answered = Set(participants.map(\.userRecordName)).union(blockedNames)
        let listed = Set(info.requesters.map(\.userRecordName))
        // Change tags are the zone's log sequence numbers. A client with no tag (a file, a
        // new share) is taken to have read the share as stored.
        let read = client.recordChangeTag.flatMap { Int64($0) } ?? Int64.max
        info.requesters = (old?.requesters ?? []).filter {
            !answered.contains($0.userRecordName) && (listed.contains($0.userRecordName) || ($0.changeTag.flatMap { Int64($0) } ?? 0) > read)
        }
        info.blocked = blocked
        info.participants = participants
        var prepared = record
        prepared.shareInfo = info
        prepared.parent = nil
        return prepared
    }

    /// A share's fields are its title, thumbnail and type (CloudKit's `CKShare.SystemFieldKey`).
    func checkShareFields(_ record: Record) throws(CKError) {
        if let key = record.fields.keys.sorted().first(where: { !ShareInfo.fieldKeys.contains($0) }) {
            throw .invalid("share \(record.recordID.recordName) cannot hold field \"\(key)\": a share holds only \(ShareInfo.fieldKeys.sorted().joined(separator: ", "))")
        }
    }
}

// MARK: Saves that share

extension Database {
    /// The share as it is once the caller leaves it: their entry `REMOVED`.
    func leaving(_ share: Record) throws(CKError) -> Record {
        guard var info = share.shareInfo, let i = info.participants.firstIndex(where: { $0.userRecordName == userRecordName }) else {
            throw notShared(share.recordID.recordName, zone: share.recordID.zoneID.zoneName)
        }
        guard info.participants[i].role != .owner else {
            throw CKError(.permissionFailure, "share \(share.recordID.recordName) is yours; delete it from your private database to end it")
        }
        info.participants[i].acceptanceStatus = .removed
        var left = share
        left.shareInfo = info
        return left
    }

    /// Ties shares and their roots together within one commit: a new share's root (in this
    /// operation or stored) gets `share`; a deleted share's root loses it; a deleted root takes
    /// its share with it. Refuses a root that is missing, shared already, or under a shared
    /// ancestor, and mixing a zone-wide share with hierarchy shares in one zone.
    /// Returns the roots saved in this operation that were given a share, with the share's
    /// item and the share each had: ``settleFailedLinks(_:_:links:)`` undoes a link whose
    /// share fails later.
    func linkShares(_ candidates: inout [(Int, Record)], _ failures: inout [ItemKey: CKError],
                    _ rewrites: inout [(record: Record, item: ItemKey?)], deleting: inout [String],
                    deletedRecords: inout [String: Record], shareNames: [String], tag: String, stamp: Stamp,
                    txn: any ZoneTransaction) throws(CKError) -> [RootLink] {
        var links: [RootLink] = []
        // Roots claimed by a share of this operation, and the roots of the zone's other shares.
        var claimed: [String: String] = [:]
        var otherRoots: [(root: String, share: String)] = []
        for n in shareNames where !deleting.contains(n) {
            if let root = try txn.record(n)?.shareInfo?.rootRecordName { otherRoots.append((root, n)) }
        }
        for (_, r) in candidates where r.isShare {
            if let root = r.shareInfo?.rootRecordName { otherRoots.append((root, r.recordID.recordName)) }
        }
        let zoneWideSaved = candidates.contains { $0.1.isShare && $0.1.recordID.recordName == ShareInfo.zoneWideRecordName }
        func restamped(_ r: Record, share: String?) -> Record {
            var copy = r.sharedBy(share)
            copy.recordChangeTag = tag
            copy.modified = stamp
            return copy
        }
        let zoneName = txn.zoneID.zoneName
        for k in candidates.indices where candidates[k].1.isShare && failures[.save(candidates[k].0)] == nil {
            let (i, share) = candidates[k]
            let name = share.recordID.recordName
            do throws(CKError) {
                guard let root = share.shareInfo?.rootRecordName else {
                    var other = candidates.first { $0.1.isShare && $0.1.shareInfo?.rootRecordName != nil && $0.1.recordID.recordName != name }?.1.recordID.recordName
                    for n in shareNames where n != name && !deleting.contains(n) && other == nil {
                        if try txn.record(n) != nil { other = n }
                    }
                    if let other {
                        throw .invalid("zone \(zoneName) already shares a hierarchy (share \(other)); a zone-wide share cannot be added to a zone with hierarchy shares: delete those first")
                    }
                    continue
                }
                if try txn.readMeta().encryption == .perZone {
                    throw .invalid("zone \(zoneName) uses per-zone encryption, which shares only the whole zone: share it with CKShare(recordZoneID:) (a share named \(ShareInfo.zoneWideRecordName)) instead of a hierarchy")
                }
                var zoneWide = zoneWideSaved
                if !zoneWide, !deleting.contains(ShareInfo.zoneWideRecordName) { zoneWide = try txn.record(ShareInfo.zoneWideRecordName) != nil }
                if name != ShareInfo.zoneWideRecordName, zoneWide {
                    throw CKError(.serverRejectedRequest, "zone \(zoneName) is shared whole (share \(ShareInfo.zoneWideRecordName)); its records cannot also be shared as a hierarchy")
                }
                if let other = claimed[root], other != name {
                    throw CKError(.alreadyShared, "record \(root) is the root of share \(other) in this operation; a record takes part in one share only")
                }
                claimed[root] = name
                var rootRecord: Record
                if let j = candidates.firstIndex(where: { $0.1.recordID.recordName == root }) {
                    guard failures[.save(candidates[j].0)] == nil else {
                        throw CKError(.referenceViolation, "the root record \(root) of share \(name) is not saved by this operation (its own save failed); fix it and save both again")
                    }
                    rootRecord = candidates[j].1
                    if let current = rootRecord.share, current != name {
                        throw CKError(.alreadyShared, "record \(root) is already the root of share \(current); a record takes part in one share only")
                    }
                    candidates[j].1 = rootRecord.sharedBy(name)
                    links.append(RootLink(root: j, share: .save(i), previous: rootRecord.share))
                } else if !deleting.contains(root), let stored = try txn.record(root) {
                    rootRecord = stored
                    if let current = stored.share, current != name {
                        throw CKError(.alreadyShared, "record \(root) is already the root of share \(current); a record takes part in one share only")
                    }
                    if stored.share != name { rewrites.append((restamped(stored, share: name), .save(i))) }
                } else {
                    throw CKError(.referenceViolation, "the root record \(root) of share \(name) does not exist in zone \(zoneName): save the root record in the same operation as its share")
                }
                // A record takes part in one share: no other share's root may be under this one.
                for other in otherRoots where other.share != name && other.root != root {
                    var below: Record? = candidates.first { $0.1.recordID.recordName == other.root }?.1
                    if below == nil { below = try txn.record(other.root) }
                    for _ in 0..<Self.maxHierarchyDepth {
                        guard let b = below, let parent = b.parent else { break }
                        if parent == root {
                            throw CKError(.alreadyShared, "record \(root) has record \(other.root) under it, the root of share \(other.share); a record takes part in one share only")
                        }
                        below = candidates.first { $0.1.recordID.recordName == parent }?.1
                        if below == nil { below = try txn.record(parent) }
                    }
                }
                // Nor may an ancestor of the root be a root.
                var current = rootRecord
                for _ in 0..<Self.maxHierarchyDepth {
                    guard let parent = current.parent else { break }
                    let inOperation = candidates.first { $0.1.recordID.recordName == parent }?.1
                    var next = inOperation
                    if next == nil { next = try txn.record(parent) }
                    guard let next else { break }
                    if let other = next.share {
                        throw CKError(.alreadyShared, "record \(root) is under record \(parent), the root of share \(other); a record takes part in one share only")
                    }
                    current = next
                }
            } catch { failures[.save(i)] = error }
        }
        for (name, server) in deletedRecords.sorted(by: { $0.key < $1.key }) {
            if server.isShare, let root = server.shareInfo?.rootRecordName, !deleting.contains(root) {
                if let j = candidates.firstIndex(where: { $0.1.recordID.recordName == root }) {
                    candidates[j].1 = candidates[j].1.sharedBy(nil)
                } else if let stored = try txn.record(root), stored.share == name {
                    // Deletes do not fail once past their checks: the rewrite goes with it.
                    rewrites.append((restamped(stored, share: nil), nil))
                }
            }
            // Deleting a shared hierarchy's root deletes its share (a save of that share in the
            // same operation fails: its root is gone).
            if let share = server.share, !deleting.contains(share), let shareRecord = try txn.record(share) {
                deleting.append(share)
                deletedRecords[share] = shareRecord
                for (i, r) in candidates where r.recordID.recordName == share && failures[.save(i)] == nil {
                    failures[.save(i)] = CKError(.referenceViolation, "share \(share) is deleted with its root record \(name) by this operation; save one or the other")
                }
            }
        }
        return links
    }

    /// Refuses moves that would put one shared root under another (a record takes part in one
    /// share): when records change their parent, every root of the zone's shares is followed
    /// up, through this operation's records, and a root met on the way fails the moved ones.
    func checkNesting(_ candidates: [(Int, Record)], _ failures: inout [ItemKey: CKError], moved: Set<String>,
                      shareNames: [String], deleting: [String], txn: any ZoneTransaction) throws(CKError) {
        var saving: [String: Record] = [:]
        for (i, r) in candidates where failures[.save(i)] == nil { saving[r.recordID.recordName] = r }
        var roots: Set<String> = []
        for n in shareNames where !deleting.contains(n) {
            var share = saving[n]
            if share == nil { share = try txn.record(n) }
            if let root = share?.shareInfo?.rootRecordName { roots.insert(root) }
        }
        for (_, r) in saving where r.isShare { if let root = r.shareInfo?.rootRecordName { roots.insert(root) } }
        guard roots.count > 1 else { return }
        for root in roots {
            var current = saving[root]
            if current == nil { current = try txn.record(root) }
            for _ in 0..<Self.maxHierarchyDepth {
                guard let c = current, let parent = c.parent else { break }
                if roots.contains(parent) {
                    for (i, r) in candidates where moved.contains(r.recordID.recordName) && failures[.save(i)] == nil {
                        failures[.save(i)] = CKError(.alreadyShared, "moving record \(r.recordID.recordName) would put record \(root), the root of a share, under record \(parent), the root of another; a record takes part in one share only")
                    }
                    return
                }
                current = saving[parent]
                if current == nil { current = try txn.record(parent) }
            }
        }
    }

    /// A root of this operation given share `share` (an item), and the share it had.
    struct RootLink {
        var root: Int
        var share: ItemKey
        var previous: String?
    }

    /// After the last failures of an operation that is not atomic: a root keeps the share it
    /// had when its new share failed, and a record whose parent (saved in the operation) failed
    /// fails too, so that no record is left under a parent that is not there. Whether any
    /// record's fate changed.
    static func settleFailedLinks(_ candidates: inout [(Int, Record)], _ failures: inout [ItemKey: CKError], links: [RootLink]) -> Bool {
        var changed = false
        for link in links where failures[link.share] != nil {
            candidates[link.root].1 = candidates[link.root].1.sharedBy(link.previous)
            changed = true
        }
        // A share whose root (saved with it) failed after all fails too.
        for link in links where failures[link.share] == nil && failures[.save(candidates[link.root].0)] != nil {
            failures[link.share] = CKError(.referenceViolation, "the root record \(candidates[link.root].1.recordID.recordName) of this share was not saved; fix it and save both again")
            changed = true
        }
        var index: [String: Int] = [:]
        for (k, c) in candidates.enumerated() { index[c.1.recordID.recordName] = k }
        var again = true
        while again {
            again = false
            for (i, record) in candidates where failures[.save(i)] == nil {
                guard let parent = record.parent, let k = index[parent], failures[.save(candidates[k].0)] != nil else { continue }
                failures[.save(i)] = CKError(.referenceViolation, "the parent of record \(record.recordID.recordName), record \(parent), was not saved; save it first or in the same operation")
                again = true
                changed = true
            }
        }
        return changed
    }

    /// Refuses a `parent` that is not there (neither stored nor saved in this operation, or
    /// deleted by it), as CloudKit's `referenceViolation`; in a shared database, also a record
    /// whose new place is outside the hierarchies shared with the caller read-write.
    func checkParents(_ candidates: [(Int, Record)], _ failures: inout [ItemKey: CKError], deleting: [String],
                      grants: ZoneGrants?, zone: String, txn: any ZoneTransaction) throws(CKError) {
        var saving: [String: Record] = [:]
        for (i, r) in candidates where failures[.save(i)] == nil { saving[r.recordID.recordName] = r }
        let lookUp = { (name: String) throws(CKError) -> Record? in
            if let r = saving[name] { return r }
            return deleting.contains(name) ? nil : try txn.record(name)
        }
        for (i, record) in candidates where failures[.save(i)] == nil {
            let name = record.recordID.recordName
            // A shared root's parent is its owner's to set (a participant's save keeps it).
            if let parent = record.parent, grants == nil || record.share == nil {
                // In a shared database a parent the caller cannot see is not there for them.
                var found = try lookUp(parent)
                if let grants, let p = found, try Self.permission(of: p, grants, lookUp: lookUp) == nil { found = nil }
                if found == nil {
                    failures[.save(i)] = CKError(.referenceViolation, "the parent of record \(name), record \(parent), does not exist in zone \(zone)\(deleting.contains(parent) ? " (this operation deletes it)" : ""); save the parent first or in the same operation")
                    continue
                }
            }
            guard let grants, !record.isShare else { continue }
            do throws(CKError) { _ = try policy.decide(.place, record, permission: try Self.permission(of: record, grants, lookUp: lookUp)) } catch {
                failures[.save(i)] = error
            }
        }
    }
}

// MARK: Telling participants

extension Database {
    /// Tells each user who shares `zone` and has database subscriptions in their shared
    /// database that a committed entry changed what they reach: a record shared with them
    /// saved or deleted, or a share that names them saved or deleted (`shares` adds those the
    /// entry deleted, or, for a zone deleted, its shares before). Best effort, after the zone's
    /// lock is released, as CloudKit's pushes are: the change stands when a notification cannot
    /// be written, and the next fetch of the shared database's changes reports it.
    func notifyParticipants(_ zone: String, entry: LogEntry, shares ended: [Record] = []) {
        var subscribed: [(user: String, subscriptions: [Subscription])] = []
        for user in store.backend.sharedDatabaseSubscribers(container: container.identifier, environment: environment) where user != ownerName {
            let theirs = store.backend.subscriptionStorage(.sharedDatabase(container: container.identifier, environment: environment, user: user))
            let database = ((try? theirs.all()) ?? []).filter { if case .database = $0.kind { true } else { false } }
            if !database.isEmpty { subscribed.append((user, database)) }
        }
        guard !subscribed.isEmpty else { return }
        let shares = (try? shareRecords(in: zone)) ?? []
        let storage = zoneStorage(zone)

        let touchedShares = entry.saved.filter(\.isShare) + ended
        let zoneID = zoneID(zone)
        for (user, subscriptions) in subscribed {
            let grants = Self.grants(of: user, from: shares)
            var concerned = touchedShares.contains { $0.shareInfo?.participant(user) != nil }
            if !concerned && !grants.isEmpty {
                concerned = entry.saved.contains { ((try? Self.permission(of: $0, grants, lookUp: storage.record(named:))) ?? nil) != nil }
                    || entry.deleted.contains { Self.wasShared(grants, root: $0.root) }
            }
            guard concerned else { continue }
            let notifications = subscriptions.compactMap { s -> CloudNotification? in
                if case .database(let type?) = s.kind, !entry.saved.contains(where: { $0.recordType == type }),
                   !entry.deleted.contains(where: { $0.recordType == type }) { return nil }
                return CloudNotification(s, scope: .shared, zoneID: zoneID, entry: entry)
            }
            guard !notifications.isEmpty else { continue }
            try? container.notificationLog(userRecordName: user, environment: environment).append(notifications)
        }
    }
}
