import Foundation

// MARK: Saving, fetching and deleting subscriptions

extension Database {
    /// The caller's subscriptions of this database: in a shared database, the caller's own file
    /// of shared-database subscriptions (not the owner's).
    var subscriptionStorage: any SubscriptionStorage {
        scope == .shared ? store.backend.subscriptionStorage(.sharedDatabase(container: container.identifier, environment: environment, user: userRecordName))
            : ownerSubscriptionStorage
    }

    /// The subscriptions of the database the zones are in (the owner's), which commits fire.
    var ownerSubscriptionStorage: any SubscriptionStorage {
        store.backend.subscriptionStorage(.database(container: container.identifier, environment: environment, scope: scope, owner: ownerName))
    }

    /// Saves subscriptions and deletes others by ID, each on its own (CKModifySubscriptionsOperation).
    /// Saving an ID the caller already has replaces that subscription; a subscription is
    /// active once this returns.
    public func modifySubscriptions(saving: [Subscription], deleting: [String] = [])
        throws(CKError) -> (saved: [(String, Result<Subscription, CKError>)], deleted: [(String, Result<Void, CKError>)]) {
        _ = try writer("save or delete subscriptions")
        var prepared: [Result<Subscription, CKError>] = []
        for s in saving {
            do throws(CKError) { prepared.append(.success(try checked(s))) } catch { prepared.append(.failure(error)) }
        }
        return try subscriptionStorage.update { (all) throws(CKError) in
            var saved: [(String, Result<Subscription, CKError>)] = []
            for result in prepared {
                guard case .success(var s) = result else {
                    saved.append((saving[saved.count].subscriptionID, result))
                    continue
                }
                if let i = all.firstIndex(where: { $0.subscriptionID == s.subscriptionID }) {
                    guard all[i].ownerUserRecordName == userRecordName else {
                        saved.append((s.subscriptionID, .failure(CKError(.constraintViolation, "subscription ID \(s.subscriptionID) is taken in the \(scope.rawValue) database by another user; choose another ID, or pass none to get a UUID"))))
                        continue
                    }
                    s.created = all[i].created
                    all[i] = s
                } else {
                    all.append(s)
                }
                saved.append((s.subscriptionID, .success(s)))
            }
            var deleted: [(String, Result<Void, CKError>)] = []
            for id in deleting {
                if let i = all.firstIndex(where: { $0.subscriptionID == id && $0.ownerUserRecordName == userRecordName }) {
                    all.remove(at: i)
                    deleted.append((id, .success(())))
                } else {
                    deleted.append((id, .failure(CKError(.unknownItem, "no subscription \(id) in your \(scope.rawValue) database; `ckfs subscription list` shows yours"))))
                }
            }
            return (saved, deleted)
        }
    }

    /// Saves one subscription; throws its error.
    @discardableResult
    public func saveSubscription(_ subscription: Subscription) throws(CKError) -> Subscription {
        try modifySubscriptions(saving: [subscription]).saved[0].1.get()
    }

    /// Deletes one of the caller's subscriptions; `unknownItem` when there is none.
    public func deleteSubscription(_ id: String) throws(CKError) {
        try modifySubscriptions(saving: [], deleting: [id]).deleted[0].1.get()
    }

    /// The caller's subscriptions in this database, by ID.
    public func subscriptions() throws(CKError) -> [Subscription] {
        try subscriptionStorage.all().filter { $0.ownerUserRecordName == userRecordName }.sorted { $0.subscriptionID < $1.subscriptionID }
    }

    /// One of the caller's subscriptions; `unknownItem` when there is none.
    public func subscription(_ id: String) throws(CKError) -> Subscription {
        guard let s = try subscriptions().first(where: { $0.subscriptionID == id }) else {
            throw CKError(.unknownItem, "no subscription \(id) in your \(scope.rawValue) database; `ckfs subscription list` shows yours")
        }
        return s
    }

    /// The subscription as it will be stored, or the reason it cannot be.
    private func checked(_ subscription: Subscription) throws(CKError) -> Subscription {
        var s = subscription
        let id = s.subscriptionID
        guard !id.isEmpty, id.utf8.count <= 255, !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalid("subscription ID \"\(id)\" must be 1 to 255 bytes without control characters")
        }
        if scope == .shared, s.zoneName != nil || !(s.kind.isDatabase) {
            // Refused before any zone is looked at: the owner's zones are not the caller's to probe.
            throw .invalid("the shared database takes database subscriptions only (as CloudKit's); save a CKDatabaseSubscription with no zone")
        }
        if let zone = s.zoneName {
            try Names.checkZoneName(zone)
            guard zoneStorage(zone).exists else {
                throw CKError(.zoneNotFound, "subscription \(id) watches zone \(zone), which does not exist in your \(scope.rawValue) database; create the zone first")
            }
        }
        switch s.kind {
        case .query(let type, let predicate):
            guard scope != .shared else {
                throw .invalid("query subscriptions are not supported in the shared database (as CloudKit's); save a CKDatabaseSubscription and fetch the changes it announces")
            }
            try Names.checkRecordType(type)
            guard !s.options.isDisjoint(with: SubscriptionOptions.triggers) else {
                throw .invalid("query subscription \(id) needs at least one of firesOnRecordCreation, firesOnRecordUpdate, firesOnRecordDeletion")
            }
            guard s.options.isSubset(of: SubscriptionOptions.triggers.union(.firesOnce)) else {
                throw .invalid("subscription \(id) has unknown option bits \(s.options.rawValue)")
            }
            if try container.schema.fields(of: type, environment: environment) != nil {
                try checkAgainstSchema(RecordQuery(recordType: type, predicate: predicate))
            } else if environment == .production {
                throw CKError(.unknownItem, "no record type \(type) in the production schema; deploy the schema first (`ckfs schema deploy`)")
            }
        case .recordZone(let type):
            if let type { try Names.checkRecordType(type) }
            guard s.options.isEmpty else {
                throw .invalid("zone subscription \(id) fires on every change in its zone; its options must be empty")
            }
            guard scope == .private else {
                throw .invalid(scope == .shared ? "the shared database takes database subscriptions only (as CloudKit's); save a CKDatabaseSubscription"
                    : "zone subscriptions are for custom zones of the private database; in the public database use a query subscription")
            }
            guard let zone = s.zoneName, zone != ZoneID.defaultZoneName else {
                throw .invalid("zone subscriptions watch a custom zone, not the default zone; use a query subscription with TRUEPREDICATE there")
            }
        case .database(let type):
            if let type { try Names.checkRecordType(type) }
            guard s.options.isEmpty else {
                throw .invalid("database subscription \(id) fires on every change in the database; its options must be empty")
            }
            guard scope != .public else {
                throw .invalid("database subscriptions are for the private database and the shared one; in the public database use a query subscription")
            }
            guard s.zoneName == nil else {
                throw .invalid("database subscription \(id) watches every zone; give it no zone, or make a zone subscription")
            }
        }
        if scope == .public, let zone = s.zoneName, zone != ZoneID.defaultZoneName {
            throw .invalid("the public database has only the default zone")
        }
        for key in s.notificationInfo.desiredKeys ?? [] {
            try Names.checkFieldKey(key, recordType: s.recordType ?? "")
        }
        let infoSize = JSONWriter.compact(s.notificationInfo.json).count
        guard infoSize <= 1024 else {
            throw CKError(.limitExceeded, "the notificationInfo of subscription \(id) takes \(infoSize) bytes; keep alert, title, sound, category and desired keys within 1024 bytes so notifications fit their \(CloudNotification.payloadLimit)-byte payload")
        }
        s.ownerUserRecordName = userRecordName
        s.created = Store.now()
        return s
    }
}

// MARK: Firing at commit

extension Subscription {
    /// Whether a commit in `zone` can concern this subscription.
    func watches(_ zone: String) -> Bool {
        switch kind {
        case .recordZone: return zoneName == zone
        case .query: return zoneName == nil || zoneName == zone
        case .database: return true
        }
    }
}

extension Database {
    /// The subscriptions a commit in `zone` must check; empty in the common case, at the
    /// cost of one `open` when the database has no subscriptions file.
    func subscriptionsWatching(_ zone: String) throws(CKError) -> [Subscription] {
        try ownerSubscriptionStorage.all().filter { $0.watches(zone) }
    }

    /// Sends the notifications a committed entry causes; called with the zone still locked,
    /// so notifications of one zone are kept in commit order. `before` holds the records as
    /// they were before the entry, by name.
    func notify(_ subscriptions: [Subscription], zone: String, entry: LogEntry, before: [String: Record]) throws(CKError) {
        let zoneID = zoneID(zone)
        // These are the zone owner's subscriptions, of their private database, also when a
        // participant's save in the shared database fires them.
        let scope = scope == .shared ? DatabaseScope.private : scope
        var produced: [(Subscription, CloudNotification)] = []
        for s in subscriptions {
            let once = s.options.contains(.firesOnce)
            switch s.kind {
            case .recordZone(let type), .database(let type):
                // One limited to a type hears of a commit that changes records of that type,
                // and of a zone created or deleted (a commit with no records).
                if let type, !(entry.saved.isEmpty && entry.deleted.isEmpty),
                   !entry.saved.contains(where: { $0.recordType == type }),
                   !entry.deleted.contains(where: { before[$0.recordName]?.recordType == type }) { continue }
                produced.append((s, CloudNotification(s, scope: scope, zoneID: zoneID, entry: entry)))
            case .query(let type, let predicate):
                var events: [(Record, CloudNotification.Reason)] = []
                // A word search reads the type's searchable strings, as a query does; were the
                // schema unreadable, every field.
                let searched = predicate.searchesWords ? try? searchableFields(of: type) : nil
                for r in entry.saved where r.recordType == type {
                    let created = before[r.recordID.recordName] == nil
                    guard s.options.contains(created ? .firesOnRecordCreation : .firesOnRecordUpdate), predicate.matches(r, searching: searched) else { continue }
                    events.append((r, created ? .recordCreated : .recordUpdated))
                }
                if s.options.contains(.firesOnRecordDeletion) {
                    for d in entry.deleted {
                        guard let old = before[d.recordName], old.recordType == type, predicate.matches(old, searching: searched) else { continue }
                        events.append((old, .recordDeleted))
                    }
                }
                for (record, reason) in events.prefix(once ? 1 : events.count) {
                    var n = CloudNotification(s, scope: scope, zoneID: zoneID, entry: entry)
                    n.recordID = record.recordID
                    n.recordType = record.recordType
                    n.reason = reason
                    n.carry(s.notificationInfo.desiredKeys ?? [], of: record)
                    produced.append((s, n))
                }
            }
        }
        guard !produced.isEmpty else { return }
        let onceIDs = Set(produced.filter { $0.0.options.contains(.firesOnce) }.map(\.0.subscriptionID))
        guard !onceIDs.isEmpty else { return try deliver(produced.map { ($0.0.ownerUserRecordName, $0.1) }) }
        // A firesOnce subscription fires for the commit that removes it, and no other: another
        // process may have fired it already.
        try ownerSubscriptionStorage.update { (all) throws(CKError) in
            let present = Set(all.map(\.subscriptionID))
            let kept = produced.filter { !$0.0.options.contains(.firesOnce) || present.contains($0.0.subscriptionID) }
            all.removeAll { onceIDs.contains($0.subscriptionID) }
            try deliver(kept.map { ($0.0.ownerUserRecordName, $0.1) })
        }
    }

    /// Tells the database subscriptions that `zone` was created or deleted, as CloudKit's fire
    /// for every change to the database's zones. Best effort, as CloudKit's pushes are: the
    /// zone change stands when a notification cannot be written, and the next fetch of the
    /// database's changes reports it.
    func notifyZoneChanged(_ zone: String) {
        guard let all = try? ownerSubscriptionStorage.all() else { return }
        let database = all.filter { if case .database = $0.kind { true } else { false } }
        guard !database.isEmpty else { return }
        let entry = LogEntry(seq: 0, time: Store.now(), userRecordName: userRecordName, deviceID: caller.deviceID,
                             clientChangeToken: nil, saved: [], deleted: [], usage: 0)
        try? notify(database, zone: zone, entry: entry, before: [:])
    }

    private func deliver(_ notifications: [(owner: String, notification: CloudNotification)]) throws(CKError) {
        var byOwner: [String: [CloudNotification]] = [:]
        var order: [String] = []
        for (owner, n) in notifications {
            if byOwner[owner] == nil { order.append(owner) }
            byOwner[owner, default: []].append(n)
        }
        for owner in order {
            try container.notificationLog(userRecordName: owner, environment: environment).append(byOwner[owner]!)
        }
    }
}

extension Container {
    /// The notifications of the user with this user record name.
    package func notificationLog(userRecordName: String, environment: Environment = .development) -> any NotificationStorage {
        store.backend.notificationStorage(container: identifier, environment: environment, userRecordName: userRecordName)
    }

    /// The notifications of local identity `userName`.
    package func notificationLog(user userName: String, environment: Environment = .development) throws(CKError) -> any NotificationStorage {
        try notificationLog(caller: Caller(userName: userName), environment: environment)
    }

    /// The notifications of the identity `caller` acts as.
    package func notificationLog(caller: Caller, environment: Environment = .development) throws(CKError) -> any NotificationStorage {
        notificationLog(userRecordName: try signedIn(caller, for: "notifications").userRecordName, environment: environment)
    }
}

extension Subscription {
    /// The subscription as stored, for a subscription of `database`.
    public func dictionary(in database: Database) -> JSONValue { json(ownerName: database.ownerName) }
}
