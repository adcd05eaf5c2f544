import Foundation

/// Copies what one store keeps into another, through the storage seam on both sides, so it
/// moves a store between backends and machines (`ckfs export`, `ckfs import`): every
/// container with its identities, credentials and schema, and in each environment the public
/// database and every user's private database with their zones (each whole as of one commit:
/// history, records, assets, so change tokens and change tags stay good), subscriptions,
/// notifications (with their tokens), key-value stores and the share registry.
///
/// Each zone is copied at one commit, taken while no other commit to it can come in; zones,
/// databases and containers are copied one after another, so two zones may be at points that
/// never stood together (as two devices syncing them would see them).
struct StoreCopy {
    let source: any StoreBackend
    let target: any StoreBackend
    /// Only these containers (nil: all).
    var containers: [String]?
    /// Only the private databases, key-value stores and notifications of these users (by name
    /// or user record name), and not the public database (nil: every user's, and it).
    var users: [String]?
    /// Only the zones of these names, and only what belongs to them: no key-value store, no
    /// notification, no subscription of another zone (nil: everything).
    var zones: [String]?
    /// Told of each zone as it is copied, and of each record (for a progress line).
    var progress: ((StoreCopyProgress) -> Void)?
    /// A container the target holds is left as it is and not copied, in place of being
    /// refused: the target's containers and the copy's others, merged.
    var skippingHeld = false

    /// Copies every container (or those named), refusing one the target holds already
    /// (skipping it with ``skippingHeld``).
    func run() throws(CKError) -> StoreCopyProgress {
        var done = StoreCopyProgress()
        if let zones { for zone in zones { try Names.checkZoneName(zone) } }
        let all = try source.containerIdentifiers()
        let chosen = try containers.map { (named) throws(CKError) -> [String] in
            for id in named where !all.contains(id) {
                throw CKError(.badContainer, "no container \(id) to copy; the store holds \(all.isEmpty ? "none" : all.joined(separator: ", "))")
            }
            return named.sorted()
        } ?? all
        // Refusals first, so that a refused import changes nothing; then what an import that
        // stopped left is removed, to be made anew.
        let held = try target.containerIdentifiers()
        var unfinished: [String] = []
        for id in chosen where held.contains(id) {
            if target.isUnfinishedCopy(container: id) {
                unfinished.append(id)
            } else if skippingHeld {
                done.skipped.append(id)
            } else {
                throw CKError(.invalidArguments, "the target holds container \(id) already (a store `ckfs init` made holds its default container); import into a new store (`ckfs import FOLDER --store NEW-FOLDER` makes one), name only containers the store lacks with --container, or leave those it holds as they are with --skip-held")
            }
        }
        for id in unfinished { try target.discardUnfinishedCopy(container: id) }
        for id in chosen where !done.skipped.contains(id) {
            try target.beginCopy(container: id)
            do throws(CKError) { try copyContainer(id, &done) } catch {
                target.abandonCopy(container: id)
                throw error
            }
            try target.finishCopy(container: id)
        }
        try target.finishCopy()
        return done
    }

    private func copyContainer(_ id: String, _ done: inout StoreCopyProgress) throws(CKError) {
        guard let info = try source.containerStorage(container: id).read() else {
            throw CKError(.badContainer, "container \(id) has no description (container.json) to copy; run `ckfs fsck` on the source")
        }
        try target.containerStorage(container: id).create(info)
        let (schema, _) = try source.schemaStorage(container: id).read()
        if schema != SchemaDocument() { _ = try target.schemaStorage(container: id).update { (kept: inout SchemaDocument) throws(CKError) in kept = schema } }
        done.containers += 1
        let chosen = info.users.values.filter { identity in users.map { $0.contains(identity.name) || $0.contains(identity.userRecordName) } ?? true }
        for name in users ?? [] where !chosen.contains(where: { $0.name == name || $0.userRecordName == name }) {
            throw CKError(.invalidArguments, "container \(id) has no user \(name); its users are \(info.users.values.map(\.name).sorted().joined(separator: ", "))")
        }
        let owners = Set(chosen.map(\.userRecordName))
        for environment in Environment.allCases {
            if users == nil { try copyDatabase(id, environment, .public, owner: ZoneID.publicOwnerName, &done) }
            for user in owners.sorted() {
                try copyDatabase(id, environment, .private, owner: user, &done)
                guard zones == nil else { continue }
                try copyKeyValues(id, environment, user: user)
                try copyNotifications(id, environment, user: user)
            }
            for user in source.sharedDatabaseSubscribers(container: id, environment: environment) where owners.contains(user) && zones == nil {
                try copySubscriptions(.sharedDatabase(container: id, environment: environment, user: user))
            }
            // The zones that may hold shares, of those copied (a name of a zone not copied
            // would only cost a look).
            if let shared = try source.sharedZoneStorage(container: id, environment: environment).read() {
                let kept = shared.filter { owners.contains($0.owner) && (zones?.contains($0.zone) ?? true) }
                if !kept.isEmpty {
                    try target.sharedZoneStorage(container: id, environment: environment).update { (_) throws(CKError) -> ([SharedZone]?, Void) in (kept, ()) }
                }
            }
        }
    }

    private func copyDatabase(_ id: String, _ environment: Environment, _ scope: DatabaseScope, owner: String,
                              _ done: inout StoreCopyProgress) throws(CKError) {
        let from = source.databaseStorage(container: id, environment: environment, scope: scope, owner: owner)
        let to = target.databaseStorage(container: id, environment: environment, scope: scope, owner: owner)
        for name in try from.zoneNames() where zones?.contains(name) ?? true {
            done.zone = "\(id) \(environment.rawValue) \(scope == .public ? "public" : owner) \(name)"
            progress?(done)
            // A zone deleted since it was listed is not copied.
            let zone = from.zone(name)
            guard zone.exists else { continue }
            do throws(CKError) {
                try zone.snapshot { (snapshot) throws(CKError) in
                    try to.restoreZone(snapshot.meta, lastSeq: snapshot.lastSeq, usage: snapshot.usage) { (restore) throws(CKError) in
                        try snapshot.forEachEntry { (entry) throws(CKError) in try restore.addEntry(entry) }
                        try snapshot.forEachRecord { (record) throws(CKError) in
                            try restore.addRecord(record)
                            done.records += 1
                            if done.records % 1_000 == 0 { progress?(done) }
                        }
                        try snapshot.forEachAsset { (checksum, file) throws(CKError) in
                            try restore.addAsset(checksum: checksum, file: file)
                            done.assets += 1
                        }
                    }
                }
            } catch where error.code == .zoneNotFound && !zone.exists {
                continue
            } catch {
                // Which zone, of which database: every database has a `_defaultZone`.
                var named = error
                named.message = "copying zone \(name) of the \(scope == .public ? "public database" : "private database of \(owner)") in \(id) (\(environment.rawValue)): " + error.message
                throw named
            }
            done.zones += 1
        }
        try copySubscriptions(.database(container: id, environment: environment, scope: scope, owner: owner))
    }

    /// The subscriptions of a database; when zones are named, only those of the zones copied.
    private func copySubscriptions(_ owner: SubscriptionOwner) throws(CKError) {
        let subscriptions = try source.subscriptionStorage(owner).all().filter { s in
            zones.map { named in s.zoneName.map(named.contains) ?? false } ?? true
        }
        guard !subscriptions.isEmpty else { return }
        try target.subscriptionStorage(owner).update { (kept: inout [Subscription]) throws(CKError) in kept = subscriptions }
    }

    private func copyNotifications(_ id: String, _ environment: Environment, user: String) throws(CKError) {
        guard let kept = try source.notificationStorage(container: id, environment: environment, userRecordName: user).snapshot() else { return }
        try target.notificationStorage(container: id, environment: environment, userRecordName: user).restore(kept)
    }

    private func copyKeyValues(_ id: String, _ environment: Environment, user: String) throws(CKError) {
        let from = source.keyValueStorage(container: id, environment: environment, userRecordName: user)
        guard try from.version() != nil else { return }
        let values = try from.read().entries
        let to = target.keyValueStorage(container: id, environment: environment, userRecordName: user)
        _ = try to.update { (entries: inout KeyValueEntries) throws(CKError) in entries = KeyValueEntries(values, limits: entries.limits) }
    }
}

/// How far an export or an import (``Store/export(to:containers:users:zones:progress:)``,
/// ``Store/importContents(from:containers:users:zones:skippingHeld:progress:)``) has come.
public struct StoreCopyProgress: Sendable {
    public var containers = 0
    public var zones = 0
    public var records = 0
    public var assets = 0
    /// The zone being copied: container, environment, database, zone.
    public var zone = ""
    /// The containers the target held, left as they were (an import that skips them).
    public var skipped: [String] = []
}
