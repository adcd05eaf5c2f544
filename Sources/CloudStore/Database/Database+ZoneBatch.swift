import Foundation

// The steps of a batch of changes to one zone, under the zone's lock, in the order
// `modifyZone` takes them: plan the saves and the deletes (each authorized by the
// ``AccessPolicy`` as its stored record is read), link shares and parents, follow DELETE_SELF
// references, check the quota, and make the log entry the commit writes.

extension Database {
    /// What one zone's batch is given under the zone's lock.
    struct ZoneBatch {
        let name: String
        let zone: ZoneID
        let options: ModifyOptions
        /// The zone's shares, found before the lock and read again under it.
        let shareNames: [String]
        /// What the caller's accepted shares grant in the zone (a shared database's).
        let grants: ZoneGrants
        let now: Int64
        let stamp: Stamp
        /// The change tag the batch's records get: the sequence number of its log entry.
        let tag: String
        /// Whether a subscription watches the zone: the records as they were are kept for it.
        let watched: Bool
        /// Who may change what, made once for the batch.
        let policy: AccessPolicy
    }

    /// What one zone's batch comes to as its steps check and plan it.
    struct ZonePlan {
        /// The items refused, by item.
        var failures: [ItemKey: CKError]
        /// The saves that passed so far, each as it will be written, with its item's index.
        var candidates: [(Int, Record)] = []
        /// The records whose parent the batch changes.
        var moved: Set<String> = []
        /// Shares as they were before the batch saved them (a participant removed hears of it),
        /// and shares a DELETE_SELF reference deletes with their root.
        var priorShares: [Record] = []
        var endedCascade: [Record] = []
        /// Each changed record's bytes before the batch, for the quota.
        var oldUsage: [String: Int64] = [:]
        /// What the saves add to the schema.
        var pending = Schema.Additions()
        /// The records the client deletes, their types, and as they were.
        var deleting: [String] = []
        var deletedTypes: [String: String] = [:]
        var deletedRecords: [String: Record] = [:]
        /// Records the store rewrites besides the client's: roots gaining or losing their
        /// share, shares a participant leaves; each with the item it follows.
        var rewrites: [(record: Record, item: ItemKey?)] = []
        /// The records DELETE_SELF references delete along.
        var cascaded: [String] = []
        /// The records as they were, for subscriptions (kept only when one watches).
        var before: [String: Record] = [:]
        /// What the commit wrote, by item, and the shares it ended, for the participants.
        var committed: [ItemKey: Record] = [:]
        var endedShares: [Record] = []
    }

    /// Refuses what needs no lock to refuse: each record's input, a record saved twice or
    /// both saved and deleted.
    func checkedInput(saves: [(Int, Record)], deletes: [(Int, RecordID)]) -> [ItemKey: CKError] {
        var failures: [ItemKey: CKError] = [:]
        var seenNames: Set<String> = []
        for (i, record) in saves {
            do throws(CKError) {
                try checkInput(record)
                guard seenNames.insert(record.recordID.recordName).inserted else {
                    throw .invalid("record \(record.recordID.recordName) is saved twice in one operation; save it once")
                }
            } catch { failures[.save(i)] = error }
        }
        for (i, id) in deletes where seenNames.contains(id.recordName) {
            failures[.delete(i)] = .invalid("record \(id.recordName) is both saved and deleted in one operation; do one or the other")
        }
        return failures
    }

    /// The zone's shares, found before its lock (a query), when the batch may touch one: in a
    /// shared database, or when a record may move (its parent set), which might carry a shared
    /// root under another. A share saved here is put in the registry before it commits.
    func sharesBeforeLock(in zoneName: String, saves: [(Int, Record)]) throws(CKError) -> [String] {
        guard scope == .shared || saves.contains(where: { $0.1.isShare || $0.1.parent != nil || $0.1.changedKeys.contains(Record.parentKey) }) else {
            return []
        }
        let names = try shareRecords(in: zoneName).map(\.recordID.recordName)
        if scope != .public, saves.contains(where: { $0.1.isShare }) {
            try ShareRegistry(container: container, environment: environment).include(owner: ownerName, zone: zoneName)
        }
        return names
    }

    /// What the caller's shares grant in the zone; in a shared database, `zoneNotFound` when
    /// nothing does.
    func grantsInZone(_ zoneName: String, shareNames: [String], txn: any ZoneTransaction) throws(CKError) -> ZoneGrants {
        guard scope == .shared else { return ZoneGrants() }
        let grants = try self.grants(in: zoneName, shareNames: shareNames, lookUp: txn.record)
        guard !grants.isEmpty else {
            throw CKError(.zoneNotFound, "zone \(zoneName) of \(ownerName) is not shared with you, or you have not accepted its share")
        }
        return grants
    }

    /// Plans each save: authorized on the stored record as it is read, its change tag checked
    /// by the save policy, its fields merged, a share prepared, its size, assets and schema
    /// checked. A save refused is noted; the others go on.
    func planSaves(_ saves: [(Int, Record)], _ batch: ZoneBatch, _ plan: inout ZonePlan, _ txn: any ZoneTransaction) throws(CKError) {
        for (i, client) in saves where plan.failures[.save(i)] == nil {
            do throws(CKError) {
                let name = client.recordID.recordName
                let server = try txn.record(name)
                // May the caller change it: asked before anything tells of the stored record.
                if let server {
                    let permission = scope == .shared ? try Self.permission(of: server, batch.grants, lookUp: txn.record) : nil
                    _ = try batch.policy.decide(.update(parent: client.parent), server, permission: permission)
                }
                if batch.watched, let server { plan.before[name] = server }
                if let server, server.recordType != client.recordType {
                    throw .invalid("record \(name) is of type \(server.recordType); a record's type never changes, so save a new record instead")
                }
                let rule = batch.options.saveRules[client.recordID] ?? SaveRule(batch.options.savePolicy)
                if rule.checksChangeTag {
                    if let server, client.recordChangeTag != server.recordChangeTag {
                        throw conflict(server: server, client: client)
                    }
                    if server == nil, let t = client.recordChangeTag {
                        throw CKError(.unknownItem, "record \(name) (change tag \(t)) no longer exists; save it without a recordChangeTag to create it again")
                    }
                }
                var fields: [String: FieldValue]
                var encrypted: Set<String>
                switch rule.fields {
                case .replaceAll:
                    (fields, encrypted) = (client.fields, client.encryptedKeys)
                case .changedKeys, .allKeys:
                    (fields, encrypted) = (server?.fields ?? [:], server?.encryptedKeys ?? [])
                    let taken = rule.fields == .changedKeys ? client.changedKeys : client.changedKeys.union(client.fields.keys)
                    for k in taken {
                        fields[k] = client.fields[k]
                        if client.encryptedKeys.contains(k) { encrypted.insert(k) } else { encrypted.remove(k) }
                    }
                }
                var parent = rule.fields == .replaceAll || client.changedKeys.contains(Record.parentKey) ? client.parent : server?.parent
                // A participant sees a root without its parent, and cannot move it.
                if scope == .shared, let server, server.share != nil { parent = server.parent }
                if parent != server?.parent { plan.moved.insert(name) }
                var record = Record(stored: client.recordType, recordID: RecordID(recordName: name, zoneID: batch.zone),
                                    fields: fields, encryptedKeys: encrypted, tag: batch.tag, created: server?.created ?? batch.stamp, modified: batch.stamp,
                                    parent: parent, share: server?.share, shareInfo: client.shareInfo)
                if record.isShare {
                    record = try preparedShare(record, client: client, server: server, zone: batch.name)
                    // Who was on it before: a participant removed hears of it too.
                    if let server { plan.priorShares.append(server) }
                }
                try checkSize(record)
                record = try resolveAssets(record, server: server, txn: txn)
                if !record.isShare { plan.pending.merge(try container.schema.check(record, environment: environment, pending: plan.pending)) }
                plan.oldUsage[name] = server.map(\.usageBytes) ?? 0
                plan.candidates.append((i, record))
            } catch { plan.failures[.save(i)] = error }
        }
    }

    /// Plans each delete: authorized on the stored record as it is read (a participant's
    /// delete of a share leaves it), its change tag checked.
    func planDeletes(_ deletes: [(Int, RecordID)], _ batch: ZoneBatch, _ plan: inout ZonePlan, _ txn: any ZoneTransaction) throws(CKError) {
        for (i, id) in deletes where plan.failures[.delete(i)] == nil {
            do throws(CKError) {
                try Names.checkRecordName(id.recordName, allowSystem: true)
                guard let server = try txn.record(id.recordName) else {
                    throw scope == .shared ? notShared(id.recordName, zone: batch.name)
                        : CKError(.unknownItem, "record \(id.recordName) does not exist in zone \(batch.name); nothing to delete")
                }
                // May the caller delete it: asked before anything tells of the stored record.
                let permission = scope == .shared ? try Self.permission(of: server, batch.grants, lookUp: txn.record) : nil
                let decision = try batch.policy.decide(.delete, server, permission: permission)
                if let expected = batch.options.deleteChangeTags[id], server.recordChangeTag != expected {
                    var e = CKError(.serverRecordChanged, "record \(id.recordName) changed on the server since your version (your change tag \(expected), the server's \(server.recordChangeTag ?? "?")); fetch it and decide again, or delete it without a change tag")
                    e.serverRecordValue = server
                    throw e
                }
                if decision == .leavesShare {
                    // A participant deleting the share leaves it; it stays for the others.
                    var left = try leaving(server)
                    left.recordChangeTag = batch.tag
                    left.modified = batch.stamp
                    plan.rewrites.append((left, .delete(i)))
                    if batch.watched { plan.before[id.recordName] = server }
                    continue
                }
                plan.deletedRecords[id.recordName] = server
                if batch.watched { plan.before[id.recordName] = server }
                if !plan.deleting.contains(id.recordName) {
                    plan.deleting.append(id.recordName)
                    plan.oldUsage[id.recordName] = server.usageBytes
                    plan.deletedTypes[id.recordName] = server.recordType
                }
            } catch { plan.failures[.delete(i)] = error }
        }
    }

    /// Ties shares to their roots, keeps shared hierarchies from nesting, and checks each
    /// record's parent (and in a shared database, where it lands); the root links, for a batch
    /// that settles its failures.
    func planLinks(_ batch: ZoneBatch, _ plan: inout ZonePlan, _ txn: any ZoneTransaction) throws(CKError) -> [RootLink] {
        let rootLinks = try linkShares(&plan.candidates, &plan.failures, &plan.rewrites, deleting: &plan.deleting, deletedRecords: &plan.deletedRecords,
                                       shareNames: batch.shareNames, tag: batch.tag, stamp: batch.stamp, txn: txn)
        if !plan.moved.isEmpty && !batch.shareNames.isEmpty {
            try checkNesting(plan.candidates, &plan.failures, moved: plan.moved, shareNames: batch.shareNames, deleting: plan.deleting, txn: txn)
        }
        for (name, record) in plan.deletedRecords where plan.oldUsage[name] == nil {
            plan.oldUsage[name] = record.usageBytes
            plan.deletedTypes[name] = record.recordType
            if batch.watched { plan.before[name] = record }
        }
        try checkParents(plan.candidates, &plan.failures, deleting: plan.deleting, grants: scope == .shared ? batch.grants : nil, zone: batch.name, txn: txn)
        // A root gaining or losing its share is an update to subscriptions, not a creation.
        if batch.watched {
            for r in plan.rewrites where plan.before[r.record.recordID.recordName] == nil {
                plan.before[r.record.recordID.recordName] = try txn.record(r.record.recordID.recordName)
            }
        }
        return rootLinks
    }

    /// Follows DELETE_SELF references: a save whose target is gone fails (repeated until no
    /// more fail), and the records the deletes reach are deleted along, if the caller may.
    func planCascade(_ deletes: [(Int, RecordID)], _ batch: ZoneBatch, _ plan: inout ZonePlan, _ txn: any ZoneTransaction) throws(CKError) {
        // Records whose save failed are not there for references to point at; repeat
        // until no more fail (A → B → C where C failed fails B, then A).
        plan.cascaded = []
        while true {
            // Records the store rewrites (roots, shares left) are saved too: not cascaded.
            let saving = Set(plan.candidates.filter { plan.failures[.save($0.0)] == nil }.map { $0.1.recordID.recordName })
                .union(plan.rewrites.map(\.record.recordID.recordName))
            let deletedSet = Set(plan.deleting)
            plan.cascaded = []
            var seen = deletedSet
            var queue = plan.deleting
            while let t = queue.popLast() {
                for r in try txn.referrers(of: t) where !seen.contains(r) && !saving.contains(r) {
                    seen.insert(r)
                    plan.cascaded.append(r)
                    queue.append(r)
                }
            }
            let gone = seen
            var newFailure = false
            for (i, record) in plan.candidates where plan.failures[.save(i)] == nil {
                for (key, target) in record.deleteSelfReferences {
                    var there = saving.contains(target)
                    if !there && !gone.contains(target), let t = try txn.record(target) {
                        // In a shared database a record not shared with the caller is not there.
                        there = true
                        if scope == .shared { there = try Self.permission(of: t, batch.grants, lookUp: txn.record) != nil }
                    }
                    if !there {
                        plan.failures[.save(i)] = CKError(.referenceViolation, "field \"\(key)\" of record \(record.recordID.recordName) refers with deleteSelf to record \(target), which \(gone.contains(target) ? "this operation deletes" : "does not exist in zone \(batch.name)"); save \(target) first or in the same operation, or use action NONE")
                        newFailure = true
                        break
                    }
                }
            }
            if !newFailure || batch.options.atomic { break }
        }
        // A participant's delete reaches, through DELETE_SELF references, only records
        // they may change, never a root; a root deleted this way takes its share along.
        var index = 0
        while index < plan.cascaded.count {
            let r = plan.cascaded[index]
            index += 1
            guard let rec = try txn.record(r) else { continue }
            let permission = scope == .shared ? try Self.permission(of: rec, batch.grants, lookUp: txn.record) : nil
            do throws(CKError) { _ = try batch.policy.decide(.cascade, rec, permission: permission) } catch {
                for (i, _) in deletes where plan.failures[.delete(i)] == nil { plan.failures[.delete(i)] = error }
                plan.deleting = []
                plan.cascaded = []
                break
            }
            if let share = rec.share, !plan.deleting.contains(share), !plan.cascaded.contains(share), try txn.record(share) != nil {
                plan.cascaded.append(share)
                for (i, c) in plan.candidates where c.recordID.recordName == share && plan.failures[.save(i)] == nil {
                    plan.failures[.save(i)] = CKError(.referenceViolation, "share \(share) is deleted with its root record \(r), which a DELETE_SELF reference deletes in this operation")
                }
            }
        }
        for r in plan.cascaded {
            guard plan.oldUsage[r] == nil, let rec = try txn.record(r) else { continue }
            plan.oldUsage[r] = rec.usageBytes
            plan.deletedTypes[r] = rec.recordType
            if rec.isShare { plan.endedCascade.append(rec) }
            if batch.watched { plan.before[r] = rec }
        }
    }

    /// The zone's usage after the batch; a save past the database's quota fails (deletes
    /// always pass).
    func checkQuota(_ batch: ZoneBatch, _ plan: inout ZonePlan, _ txn: any ZoneTransaction) throws(CKError) -> Int64 {
        // Quota: checked before the commit point; deletes always pass.
        let quota = quotaBytes
        let others = try usage(excluding: batch.name)
        var usage = txn.usage
        for name in plan.deleting + plan.cascaded { usage -= plan.oldUsage[name] ?? 0 }
        for (i, record) in plan.candidates where plan.failures[.save(i)] == nil {
            let delta = record.usageBytes - (plan.oldUsage[record.recordID.recordName] ?? 0)
            if delta > 0 && others + usage + delta > quota {
                plan.failures[.save(i)] = CKError(.quotaExceeded, "saving record \(record.recordID.recordName) would use \(others + usage + delta) bytes of this \(scope.rawValue) database's quota of \(quota); delete records or assets to make room")
                if batch.options.atomic { break }
                continue
            }
            usage += delta
        }
        return usage
    }

    /// The log entry the commit writes, or nil when nothing is written (nothing passed, or an
    /// atomic batch with a failure); the schema takes what the saves add.
    func logEntry(_ batch: ZoneBatch, _ plan: inout ZonePlan, rootLinks: [RootLink], usage: Int64, _ txn: any ZoneTransaction) throws(CKError) -> LogEntry? {
        var usage = usage
        if batch.options.atomic && !plan.failures.isEmpty { return nil }
        if !plan.failures.isEmpty {
            // Not atomic: a record whose parent, or whose share, failed after all fails too
            // (or its root keeps the share it had), and the usage counts what is left.
            let changed = Self.settleFailedLinks(&plan.candidates, &plan.failures, links: rootLinks)
            if changed {
                usage = txn.usage
                for name in plan.deleting + plan.cascaded { usage -= plan.oldUsage[name] ?? 0 }
                for (i, record) in plan.candidates where plan.failures[.save(i)] == nil {
                    usage += record.usageBytes - (plan.oldUsage[record.recordID.recordName] ?? 0)
                }
            }
        }
        let toSave = plan.candidates.filter { plan.failures[.save($0.0)] == nil }
        let rewritten = plan.rewrites.filter { $0.item.map { plan.failures[$0] == nil } ?? true }.map(\.record)
        guard !toSave.isEmpty || !plan.deleting.isEmpty || !rewritten.isEmpty else { return nil }
        // Each deleted record's shared hierarchy, kept in the log for change fetches
        // in shared databases (the record and its ancestors are gone afterwards); a
        // record whose ancestors cannot be read counts as in none.
        var sharedRoots: [String: String?] = [:]
        for name in plan.deleting + plan.cascaded {
            if let record = try txn.record(name), record.parent != nil || record.share != nil {
                sharedRoots[name] = try? Self.sharedRoot(of: record, lookUp: txn.record)
            }
        }
        // What the committed records add; checked again only when some candidate failed
        // after its check, since a later one may rely on a field only that one added.
        var additions = plan.pending
        if toSave.count < plan.candidates.count {
            additions = Schema.Additions()
            for (_, record) in toSave where !record.isShare {
                additions.merge(try container.schema.check(record, environment: environment, pending: additions))
            }
        }
        try container.schema.add(additions, environment: environment)
        for (i, record) in toSave { plan.committed[.save(i)] = record }
        plan.endedShares = plan.deletedRecords.values.filter(\.isShare) + plan.priorShares + plan.endedCascade
        let entry = LogEntry(
            seq: 0, time: batch.now, userRecordName: userRecordName, deviceID: caller.deviceID,
            clientChangeToken: batch.options.clientChangeToken, saved: toSave.map(\.1) + rewritten,
            deleted: plan.deleting.map { .init(recordName: $0, cascade: false, recordType: plan.deletedTypes[$0], root: sharedRoots[$0] ?? nil) }
                + plan.cascaded.map { .init(recordName: $0, cascade: true, recordType: plan.deletedTypes[$0], root: sharedRoots[$0] ?? nil) },
            usage: usage)
        return entry
    }
}
