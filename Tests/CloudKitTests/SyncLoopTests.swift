import CloudKit
import CloudStore
import Testing
import TestSupport

/// The sync loop CloudKit apps write, with `import CloudKit` alone: database changes name the
/// zones, zone changes bring their records, and both tokens are archived with
/// `NSKeyedArchiver` between runs, as an app keeps them on disk across launches.
@Suite struct SyncLoopTests {
    /// What an app keeps locally: its copy of the records and the archived tokens.
    /// `@unchecked Sendable`: every property is touched under `lock`.
    final class LocalCache: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [String: String] = [:]
        private var databaseTokenData: Data?
        private var zoneTokenData: [String: Data] = [:]
        private(set) var tokenUpdates = 0
        private var types: [String] = []

        func noteDeletedType(_ type: String) { lock.withLock { types.append(type) } }
        var deletedTypes: [String] { lock.withLock { types } }

        var records: [String: String] { lock.withLock { texts } }
        func set(_ key: String, _ text: String?) { lock.withLock { texts[key] = text } }
        func dropZone(_ zone: String) {
            lock.withLock {
                texts = texts.filter { !$0.key.hasPrefix(zone + "/") }
                zoneTokenData[zone] = nil
            }
        }

        var databaseToken: CKServerChangeToken? { lock.withLock { databaseTokenData }.flatMap(Self.unarchive) }
        func setDatabaseToken(_ token: CKServerChangeToken) {
            let data = Self.archive(token)
            lock.withLock { databaseTokenData = data }
        }
        func zoneToken(_ zone: String) -> CKServerChangeToken? { lock.withLock { zoneTokenData[zone] }.flatMap(Self.unarchive) }
        func setZoneToken(_ zone: String, _ token: CKServerChangeToken?, midway: Bool) {
            guard let token else { return }
            let data = Self.archive(token)
            lock.withLock {
                zoneTokenData[zone] = data
                if midway { tokenUpdates += 1 }
            }
        }

        /// The cache as the app would write it to disk and read it back at the next launch.
        func relaunched() -> LocalCache {
            let copy = LocalCache()
            lock.withLock {
                copy.texts = texts
                copy.databaseTokenData = databaseTokenData
                copy.zoneTokenData = zoneTokenData
            }
            return copy
        }

        static func archive(_ token: CKServerChangeToken) -> Data {
            (try? NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)) ?? Data()
        }

        static func unarchive(_ data: Data) -> CKServerChangeToken? {
            try? NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data)
        }
    }

    /// One sync: which zones changed, then each changed zone's records, `pageSize` at a time.
    static func sync(_ db: CKDatabase, _ cache: LocalCache, pageSize: Int = 0) async throws {
        let changedZones = LockedList<CKRecordZone.ID>()
        let databaseChanges = CKFetchDatabaseChangesOperation(previousServerChangeToken: cache.databaseToken)
        databaseChanges.recordZoneWithIDChangedBlock = { changedZones.append($0) }
        databaseChanges.recordZoneWithIDWasDeletedBlock = { cache.dropZone($0.zoneName) }
        databaseChanges.changeTokenUpdatedBlock = { cache.setDatabaseToken($0) }
        let databaseToken: CKServerChangeToken = try await withCheckedThrowingContinuation { c in
            databaseChanges.fetchDatabaseChangesResultBlock = { result in c.resume(with: result.map(\.serverChangeToken)) }
            db.add(databaseChanges)
        }
        let zones = changedZones.items
        if !zones.isEmpty {
            var configurations: [CKRecordZone.ID: CKFetchRecordZoneChangesOperation.ZoneConfiguration] = [:]
            for zone in zones {
                configurations[zone] = .init(previousServerChangeToken: cache.zoneToken(zone.zoneName), resultsLimit: pageSize)
            }
            let zoneChanges = CKFetchRecordZoneChangesOperation(recordZoneIDs: zones, configurationsByRecordZoneID: configurations)
            zoneChanges.recordWasChangedBlock = { id, result in
                if case .success(let record) = result { cache.set("\(id.zoneID.zoneName)/\(id.recordName)", record["text"] as? String ?? "") }
            }
            zoneChanges.recordWithIDWasDeletedBlock = { id, type in
                cache.set("\(id.zoneID.zoneName)/\(id.recordName)", nil)
                cache.noteDeletedType(type)
            }
            zoneChanges.recordZoneChangeTokensUpdatedBlock = { zone, token, _ in cache.setZoneToken(zone.zoneName, token, midway: true) }
            zoneChanges.recordZoneFetchResultBlock = { zone, result in
                if case .success(let done) = result { cache.setZoneToken(zone.zoneName, done.serverChangeToken, midway: false) }
            }
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                zoneChanges.fetchRecordZoneChangesResultBlock = { c.resume(with: $0) }
                db.add(zoneChanges)
            }
        }
        // The database token is kept only once every zone it named is in the cache.
        cache.setDatabaseToken(databaseToken)
    }

    /// Every record of the zones, read straight from the store: what the cache must equal.
    static func truth(_ db: CKDatabase) async throws -> [String: String] {
        var all: [String: String] = [:]
        for zone in try await db.allRecordZones() {
            let (results, _) = try await db.records(matching: CKQuery(recordType: "Note", predicate: NSPredicate(value: true)),
                                                     inZoneWith: zone.zoneID, resultsLimit: 400)
            for (id, result) in results { all["\(zone.zoneID.zoneName)/\(id.recordName)"] = try result.get()["text"] as? String ?? "" }
        }
        return all
    }

    static func note(_ name: String, _ text: String, in zone: String) -> CKRecord {
        let record = CKRecord(recordType: "Note", recordID: CKRecord.ID(recordName: name, zoneID: CKRecordZone.ID(zoneName: zone)))
        record["text"] = text
        return record
    }

    @Test(.timeLimit(hangLimit)) func aSyncLoopWithArchivedTokensSeesEveryChangeOnce() async throws {
        let path = TemporaryStores.path("ckfs-sync-")
        let store = try Store.create(at: path)
        let phone = try CKContainer(store: store, user: "mei", deviceID: "phone").privateCloudDatabase
        let laptop = try CKContainer(store: Store.open(at: path), user: "mei", deviceID: "laptop").privateCloudDatabase

        // The laptop makes two zones with notes; the phone syncs them in pages of two.
        for zone in ["Work", "Home"] { try await laptop.save(CKRecordZone(zoneName: zone)) }
        _ = try await laptop.modifyRecords(saving: (0..<7).map { Self.note("w\($0)", "work \($0)", in: "Work") }, deleting: [])
        _ = try await laptop.modifyRecords(saving: (0..<3).map { Self.note("h\($0)", "home \($0)", in: "Home") }, deleting: [])
        var cache = LocalCache()
        try await Self.sync(phone, cache, pageSize: 2)
        #expect(cache.records == (try await Self.truth(laptop)))
        #expect(cache.records.count == 10)
        #expect(cache.tokenUpdates >= 3, "a zone of 7 in pages of 2 updates its token between pages")

        // The phone's app quits and launches again: only the archived tokens are left.
        cache = cache.relaunched()
        try await Self.sync(phone, cache)
        #expect(cache.records.count == 10)

        // Meanwhile the laptop adds, changes and deletes, and deletes a zone.
        let (saves, deletes) = try await laptop.modifyRecords(
            saving: [Self.note("w1", "changed", in: "Work"), Self.note("w9", "new", in: "Work")],
            deleting: [CKRecord.ID(recordName: "w2", zoneID: CKRecordZone.ID(zoneName: "Work"))], savePolicy: .changedKeys)
        #expect(saves.values.allSatisfy { (try? $0.get()) != nil } && deletes.count == 1)
        try await laptop.deleteRecordZone(withID: CKRecordZone.ID(zoneName: "Home"))
        try await Self.sync(phone, cache)
        let now = try await Self.truth(laptop)
        #expect(cache.records == now)
        #expect(cache.records["Work/w1"] == "changed" && cache.records["Work/w2"] == nil && cache.records["Home/h0"] == nil)
        #expect(cache.deletedTypes == ["Note"])                          // w2, with its type

        // A sync with nothing new changes nothing, and a zone token cannot stand for the database's.
        try await Self.sync(phone, cache)
        #expect(cache.records == now)
        let wrongKind = CKFetchDatabaseChangesOperation(previousServerChangeToken: cache.zoneToken("Work"))
        let error: (any Error)? = await withCheckedContinuation { c in
            wrongKind.fetchDatabaseChangesCompletionBlock = { _, _, error in c.resume(returning: error) }
            phone.add(wrongKind)
        }
        #expect((error as? CKError)?.code == .invalidArguments)
    }

    @Test func aChangeTokenArchivesAndComparesAsCloudKitsDoes() async throws {
        let db = try ImportCloudKitTests.container().privateCloudDatabase
        let doc = CKRecord(recordType: "Doc", recordID: CKRecord.ID(recordName: "a"))
        _ = try await db.save(doc)
        let first = try await db.recordZoneChanges(inZoneWith: .default, since: nil)
        let data = try NSKeyedArchiver.archivedData(withRootObject: first.changeToken, requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data))
        #expect(back == first.changeToken)
        #expect(first.modificationResultsByID.count == 1)
        let again = try await db.recordZoneChanges(inZoneWith: .default, since: back)
        #expect(again.modificationResultsByID.isEmpty && again.deletions.isEmpty && !again.moreComing)
        _ = try await db.deleteRecord(withID: CKRecord.ID(recordName: "a"))
        let gone = try await db.recordZoneChanges(inZoneWith: .default, since: back)
        #expect(gone.deletions.map(\.recordID.recordName) == ["a"])
        #expect(gone.deletions.map(\.recordType) == ["Doc"])
        let zones = try await db.databaseChanges(since: nil)
        #expect(zones.modifications.map(\.zoneID.zoneName).contains("_defaultZone"))
    }
}
