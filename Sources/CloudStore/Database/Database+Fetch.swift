import Foundation

extension Database {
    /// Fetches records by ID: one result per ID, in order; a missing record is
    /// `unknownItem`, a missing zone `zoneNotFound`. `desiredKeys` limits the fields returned.
    public func fetch(_ ids: [RecordID], desiredKeys: [String]? = nil) -> [(RecordID, Result<Record, CKError>)] {
        // In a shared database, the caller's grants in each zone, read once per zone.
        var grantsByZone: [String: ZoneGrants] = [:]
        return ids.map { id in
            let id = normalized(id)
            do throws(CKError) {
                try Names.checkRecordName(id.recordName, allowSystem: true)
                var grants: ZoneGrants?
                if scope == .shared {
                    if let known = grantsByZone[id.zoneID.zoneName] { grants = known } else {
                        grants = try currentGrants(id.zoneID.zoneName)
                        grantsByZone[id.zoneID.zoneName] = grants
                    }
                }
                guard let record = try zoneStorage(id.zoneID.zoneName).record(named: id.recordName) ?? unsavedUserRecord(id) else {
                    // In a shared database a missing record reads as one not shared.
                    throw scope == .shared ? notShared(id.recordName, zone: id.zoneID.zoneName)
                        : CKError(.unknownItem, "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)")
                }
                guard scope == .shared else { return (id, .success(record.limited(to: desiredKeys))) }
                guard let shown = try visible([record], in: id.zoneID.zoneName, grants: grants).first else {
                    throw notShared(id.recordName, zone: id.zoneID.zoneName)
                }
                return (id, .success(shown.limited(to: desiredKeys)))
            } catch {
                return (id, .failure(error))
            }
        }
    }

    /// A user's record exists from enrolment on; until its user first saves it, it is
    /// empty and has no change tag (a save without one stores it).
    func unsavedUserRecord(_ id: RecordID) -> Record? {
        guard scope == .public, id.zoneID.zoneName == ZoneID.defaultZoneName, id.recordName.hasPrefix("_"),
              let user = (try? container.fresh())?.identity(userRecordName: id.recordName) else { return nil }
        let stamp = Stamp(timestamp: user.created, userRecordName: user.userRecordName, deviceID: "")
        return Record(stored: Schema.usersRecordType, recordID: id, fields: [:], tag: nil, created: stamp, modified: stamp)
    }

    /// Fetches one record; throws `unknownItem` when there is none.
    public func record(for id: RecordID, desiredKeys: [String]? = nil) throws(CKError) -> Record {
        try fetch([id], desiredKeys: desiredKeys)[0].1.get()
    }

    /// A local file holding the contents of an asset of a record in `zone`, to read or to
    /// copy; `assetFileNotFound` when the zone no longer holds it.
    public func assetFile(_ asset: Asset, zone: String = ZoneID.defaultZoneName) throws(CKError) -> String {
        guard let file = try zoneStorage(zone).assetFile(asset.fileChecksum) else {
            throw CKError(.assetFileNotFound, "the asset \(asset.fileChecksum) is no longer in zone \(zone)")
        }
        return file
    }

    /// A local folder where the assets of `record` are files named by their checksums.
    package func assetFolder(of record: Record) throws(CKError) -> String {
        try zoneStorage(record.recordID.zoneID.zoneName).assetFolder(holding: record.assetChecksums)
    }

    /// How many records a zone holds, from its directory listing (no record is read); in a
    /// shared database, how many are shared with the caller (each is read).
    public func recordCount(in zone: String = ZoneID.defaultZoneName) throws(CKError) -> Int {
        if scope == .shared { return try allRecords(in: zone).count }
        return try zoneStorage(zone).recordCount()
    }

    /// All records of a zone, read from their files; in a shared database, those shared with the caller.
    public func allRecords(in zone: String = ZoneID.defaultZoneName) throws(CKError) -> [Record] {
        let storage = zoneStorage(zone)
        guard storage.exists else { throw CKError(.zoneNotFound, "zone \(zone) does not exist") }
        var out: [Record] = []
        for name in try storage.recordNames() {
            if let r = try storage.record(named: name) { out.append(r) }
        }
        return try visible(out, in: zone)
    }
}

// MARK: Changes

/// Marks a point in a zone's history. Opaque to clients; printed as `<epoch>-<seq>`, or, part
/// way through a first fetch that is paged, `<epoch>-<seq>.<hex of the last record name given>`.
public struct ChangeToken: Sendable, Hashable, CustomStringConvertible {
    public var epoch: String
    public var seq: Int64
    /// Set part way through a first fetch: the records named after this come next, then the
    /// changes after `seq`.
    public var resumeAfter: String?

    public init(epoch: String, seq: Int64, resumeAfter: String? = nil) {
        self.epoch = epoch
        self.seq = seq
        self.resumeAfter = resumeAfter
    }

    public init?(string: String) {
        guard let dash = string.lastIndex(of: "-") else { return nil }
        var tail = string[string.index(after: dash)...]
        var resumeAfter: String?
        if let dot = tail.firstIndex(of: ".") {
            guard let name = Hex.bytes(tail[tail.index(after: dot)...]), !name.isEmpty else { return nil }
            resumeAfter = String(decoding: name, as: UTF8.self)
            tail = tail[..<dot]
        }
        guard let seq = Int64(tail), seq >= 0 else { return nil }
        self.init(epoch: String(string[..<dash]), seq: seq, resumeAfter: resumeAfter)
    }

    public var description: String {
        "\(epoch)-\(seq)" + (resumeAfter.map { "." + Hex.string($0.utf8) } ?? "")
    }
}

/// What changed in a zone since a token.
public struct ZoneChanges: Sendable {
    /// Records saved since the token, each in its current version, in the order of their last change.
    public var changed: [Record]
    /// Records deleted since the token (and not saved again).
    public var deleted: [RecordID]
    /// The type of each deleted record whose type the zone's history keeps, by name.
    public var deletedRecordTypes: [String: String] = [:]
    /// Pass this to the next fetch.
    public var token: ChangeToken
    /// More changes remain after `token`.
    public var moreComing: Bool
    /// The client change token of the last operation that gave one.
    public var clientChangeToken: Data?
}

extension Database {
    /// The zone's current point in its change history: what a fetch of every change would
    /// end at, read without the records.
    public func currentChangeToken(in zone: String = ZoneID.defaultZoneName) throws(CKError) -> ChangeToken {
        if scope == .shared { _ = try currentGrants(zone) }
        return try storedChangeToken(in: zone)
    }

    /// ``currentChangeToken(in:)`` for a zone the caller's grants were checked for already.
    func storedChangeToken(in zone: String) throws(CKError) -> ChangeToken {
        let storage = zoneStorage(zone)
        guard storage.exists else { throw CKError(.zoneNotFound, "zone \(zone) does not exist in this \(scope.rawValue) database") }
        return ChangeToken(epoch: try storage.readMeta().epoch, seq: try storage.lastCommit()?.seq ?? 0)
    }

    /// Changes in a zone since `token` (nil: everything, as for a first sync). A token from
    /// before the kept history, or from a zone since deleted, fails with `changeTokenExpired`.
    public func changes(in zone: String = ZoneID.defaultZoneName, since token: ChangeToken?, limit: Int? = nil,
                        desiredKeys: [String]? = nil) throws(CKError) -> ZoneChanges {
        if let limit, limit < 1 { throw CKError(.invalidArguments, "a change fetch's limit must be at least 1, not \(limit)") }
        // In a shared database the grant comes first: a zone not shared is not there.
        let grants = try sharedGrants(zone)
        let storage = zoneStorage(zone)
        let meta = try storage.readMeta()
        if let token, token.epoch != meta.epoch {
            throw CKError(.changeTokenExpired, "the change token is from an earlier zone \(zone) that was deleted; fetch all changes again without a token")
        }
        guard let token, token.resumeAfter == nil else {
            return try firstFetch(in: zone, storage: storage, meta: meta, resuming: token, limit: limit, desiredKeys: desiredKeys, grants: grants)
        }
        guard let page = try storage.history(after: token.seq, changeLimit: limit, meta: meta) else {
            throw CKError(.changeTokenExpired, "the change token is older than the history zone \(zone) keeps; fetch all changes again without a token")
        }
        // Each record once, at its last change: an earlier place is blanked when it changes again.
        var order: [String?] = []
        var place: [String: Int] = [:]
        var state: [String: Record?] = [:]
        var deletedTypes: [String: String] = [:]
        var deletedRoots: [String: String] = [:]
        func moveToEnd(_ name: String) {
            if let old = place[name] { order[old] = nil }
            place[name] = order.count
            order.append(name)
        }
        var last = token.seq
        for entry in page.entries {
            for d in entry.deleted {
                state[d.recordName] = .some(nil)
                deletedTypes[d.recordName] = d.recordType
                if let root = d.root { deletedRoots[d.recordName] = root }
                moveToEnd(d.recordName)
            }
            for r in entry.saved {
                state[r.recordID.recordName] = .some(r)
                moveToEnd(r.recordID.recordName)
            }
            last = entry.seq
        }
        var changed: [Record] = []
        var deleted: [RecordID] = []
        for case let name? in order {
            if let r = state[name] ?? nil { changed.append(r.limited(to: desiredKeys)) } else { deleted.append(RecordID(recordName: name, zoneID: zoneID(zone))) }
        }
        if scope == .shared {
            changed = try visible(changed, in: zone, grants: grants)
            deleted = try visibleDeletions(deleted, roots: deletedRoots, in: zone, grants: grants)
        }
        // The zone's client change token is its owner's clients', not a participant's.
        var changes = ZoneChanges(changed: changed, deleted: deleted, token: ChangeToken(epoch: meta.epoch, seq: last),
                                  moreComing: page.moreComing, clientChangeToken: scope == .shared ? nil : page.clientChangeToken)
        let reported = Set(deleted.map(\.recordName))
        changes.deletedRecordTypes = deletedTypes.filter { name, _ in state[name] == .some(nil) && reported.contains(name) }
        return changes
    }

    /// A first fetch: every record of the zone as it is now, in name order, `limit` at a time.
    /// Its token holds the zone's point in history when the fetch began and the last name
    /// given; the last page's token is that point alone, so the next fetch gives what changed
    /// meanwhile (a record saved during the paging may come twice, never not at all).
    private func firstFetch(in zone: String, storage: any ZoneStorage, meta: ZoneMeta, resuming token: ChangeToken?, limit: Int?,
                            desiredKeys: [String]?, grants: ZoneGrants?) throws(CKError) -> ZoneChanges {
        var seq: Int64 = 0
        if let token { seq = token.seq } else if let last = try storage.lastCommit() { seq = last.seq }
        var (names, more) = try storage.firstFetchNames(epoch: meta.epoch, startedAt: seq, after: token?.resumeAfter, limit: limit)
        var records: [Record] = []
        for name in names {
            if let r = try storage.record(named: name) { records.append(r.limited(to: desiredKeys)) }
        }
        if scope == .shared {
            // Only the records shared with the caller, `limit` of them, and a token that goes on
            // from the last of those: a name walked past is not the caller's to see.
            records = try visible(records, in: zone, grants: grants)
            // One shared record past the page, not a name walked past, says more remain.
            while more, limit.map({ records.count <= $0 }) ?? true, let last = names.last {
                (names, more) = try storage.firstFetchNames(epoch: meta.epoch, startedAt: seq, after: last, limit: limit)
                var page: [Record] = []
                for name in names {
                    if let r = try storage.record(named: name) { page.append(r.limited(to: desiredKeys)) }
                }
                records += try visible(page, in: zone, grants: grants)
            }
            if let limit, records.count > limit {
                records.removeLast(records.count - limit)
                more = true
            } else {
                more = false
            }
            if more, let last = records.last { names = [last.recordID.recordName][...] }
        }
        let client = try storage.clientChangeToken(upTo: seq, meta: meta)
        var next = ChangeToken(epoch: meta.epoch, seq: seq)
        if more, let last = names.last {
            next.resumeAfter = last
        } else if let now = try storage.lastCommit()?.seq, now > seq {
            // Saves landed while the pages were read: they come next, after this token.
            more = true
        }
        return ZoneChanges(changed: records, deleted: [], token: next, moreComing: more, clientChangeToken: scope == .shared ? nil : client)
    }
}
