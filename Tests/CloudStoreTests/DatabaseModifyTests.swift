import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudStore

/// Saves and deletes: policies, atomic and non-atomic batches, references, field types, limits, schema, quotas, client change tokens.
@Suite struct DatabaseModifyTests {
    @Test func saveSetsSystemFieldsAndEverySaveChangesTheTag() throws {
        let t = try TempStore()
        let db = try t.db()
        var r = record("n1", ["title": .string("a")])
        r.recordChangeTag = "999"
        r.created = Stamp(timestamp: 1, userRecordName: "_forged", deviceID: "x")
        r.recordChangeTag = nil
        let first = try db.save(r)
        #expect(first.recordChangeTag != nil)
        #expect(first.created?.userRecordName == db.userRecordName, "system fields are set by the store")
        #expect(first.created?.deviceID == "test-device")
        #expect(first.changedKeys.isEmpty)
        var edit = first
        edit["title"] = .string("b")
        #expect(edit.changedKeys == ["title"], "a record knows which fields changed since it was fetched")
        let second = try db.save(edit)
        #expect(second.recordChangeTag != first.recordChangeTag)
        #expect(second.created == first.created)
        #expect(second.modified!.timestamp >= first.modified!.timestamp)
        #expect(try db.record(for: id("n1"))["title"] == .string("b"))
    }

    /// Each policy against a record changed on the server since the client fetched it.
    @Test func savePoliciesAgainstAChangedServerRecord() throws {
        let t = try TempStore()
        let db = try t.db()
        let base = try db.save(record("p", ["a": .string("a0"), "b": .string("b0"), "c": .string("c0")]))
        var other = base
        other["b"] = .string("b-server")
        other["s"] = .string("server-only")
        let server = try db.save(other)

        // The client edits the old version: a changed, c removed.
        var client = base
        client["a"] = .string("a-client")
        client["c"] = nil

        // ifServerRecordUnchanged: fails with the three records.
        let result = try db.modify(saving: [client])
        let e = try #require(result.saveResults[0].1.error)
        #expect(e.code == .serverRecordChanged)
        #expect(e.serverRecordValue?.recordChangeTag == server.recordChangeTag)
        #expect(e.clientRecordValue?["a"] == .string("a-client"))
        #expect(e.ancestorRecordValue?.recordChangeTag == base.recordChangeTag)
        #expect(e.ancestorRecordValue?["b"] == .string("b0"))
        #expect(result.error?.code == .partialFailure)
        #expect(try db.record(for: id("p")) == server, "nothing changed")

        // changedKeys: only a and c are written over the server's record.
        let merged = try db.save(client, policy: .changedKeys)
        #expect(merged["a"] == .string("a-client"))
        #expect(merged["b"] == .string("b-server"))
        #expect(merged["c"] == nil)
        #expect(merged["s"] == .string("server-only"))

        // allKeys: all the client's fields; keys only the server has stay.
        var full = base
        full["a"] = .string("a-all")
        let all = try db.save(full, policy: .allKeys)
        #expect(all["a"] == .string("a-all"))
        #expect(all["b"] == .string("b0"), "the client's b overwrites the server's")
        #expect(all["c"] == .string("c0"))
        #expect(all["s"] == .string("server-only"))
    }

    @Test func creatingARecordThatExistsIsAConflict() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("dup", ["a": .int64(1)]))
        #expect(throws: CKError.self) { try db.save(record("dup", ["a": .int64(2)])) }
        do { try db.save(record("dup")) } catch { #expect(error.code == .serverRecordChanged) }
    }

    /// Atomic — one bad record fails the zone; the others report batchRequestFailed.
    @Test func oneBadRecordInAnAtomicBatchSavesNothingInThatZone() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("other")
        let records = [record("g1", ["a": .int64(1)]), record("_bad"), record("g2", ["a": .int64(2)]),
                       record("o1", zone: "other", ["a": .int64(1)])]
        let result = try db.modify(saving: records)
        #expect(result.saveResults[0].1.error?.code == .batchRequestFailed)
        #expect(result.saveResults[1].1.error?.code == .invalidArguments)
        #expect(result.saveResults[2].1.error?.code == .batchRequestFailed)
        #expect((try? result.saveResults[3].1.get()) != nil, "zones do not affect each other")
        #expect(db.fetch([id("g1"), id("g2")]).allSatisfy { $0.1.error?.code == .unknownItem })
        let partial = try #require(result.error)
        #expect(partial.code == .partialFailure)
        #expect(partial.partialErrors?.count == 3)
        #expect(partial.partialError(for: db.normalized(id("_bad")))?.code == .invalidArguments)
    }

    @Test func oneBadRecordInANonAtomicBatchLetsTheRestSave() throws {
        let t = try TempStore()
        let db = try t.db()
        let result = try db.modify(saving: [record("g1", ["a": .int64(1)]), record("g2", ["a": .string("type clash")]), record("g3", ["a": .int64(3)])],
                                   options: ModifyOptions(atomic: false))
        #expect(result.savedRecords.map(\.recordID.recordName) == ["g1", "g3"])
        #expect(result.saveResults[1].1.error?.code == .invalidArguments, "a field's type is fixed by its first save")
        #expect(try db.record(for: id("g3"))["a"] == .int64(3))
        #expect(result.error?.partialErrors?.count == 1)
    }

    /// A record that fails after its schema check (here: a reference) adds nothing to the
    /// schema; the records saved with it still add what they need.
    @Test func aFailedRecordAddsNothingToTheSchema() throws {
        let t = try TempStore()
        let db = try t.db()
        let result = try db.modify(saving: [
            record("x", type: "S", ["shared": .int64(1), "onlyX": .string("x"), "to": .reference(Reference(recordName: "nobody", action: .deleteSelf))]),
            record("y", type: "S", ["shared": .int64(2)]),
        ], options: ModifyOptions(atomic: false))
        #expect(result.saveResults[0].1.error?.code == .referenceViolation)
        #expect(result.savedRecords.map(\.recordID.recordName) == ["y"])
        let fields = try t.store.container().schema.types(.development)["S"]
        #expect(fields?["shared"] == FieldType(.int64))
        #expect(fields?["onlyX"] == nil)
        #expect(fields?["to"] == nil)
    }

    @Test func progressAndCancellation() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.createZone("z2")
        let calls = LockedBox<[(String, Double)]>([])
        let result = try db.modify(saving: [record("a"), record("b", zone: "z2")], progress: { id, p in calls.mutate { $0.append((id.recordName, p)) } })
        #expect(result.error == nil)
        #expect(calls.value.filter { $0.1 == 0 }.map(\.0).sorted() == ["a", "b"])
        #expect(calls.value.filter { $0.1 == 1 }.map(\.0).sorted() == ["a", "b"])
        // Cancelled before any zone: nothing applied.
        let cancelled = try db.modify(saving: [record("c"), record("d", zone: "z2")], isCancelled: { true })
        #expect(cancelled.saveResults.allSatisfy { $0.1.error?.code == .operationCancelled })
        #expect(db.fetch([id("c"), id("d", zone: "z2")]).allSatisfy { $0.1.error?.code == .unknownItem })
        // Cancelled after the first zone: the first stays, the second is not applied.
        let asked = LockedBox(0)
        let half = try db.modify(saving: [record("e"), record("f", zone: "z2")], isCancelled: { asked.mutate { $0 += 1 }; return asked.value > 1 })
        #expect((try? half.saveResults[0].1.get()) != nil)
        #expect(half.saveResults[1].1.error?.code == .operationCancelled)
    }

    /// DeleteSelf references, found in memory and, by a store that reads zones from their
    /// index files, in the index.
    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func deleteSelfTargetMustExistAndDeletesCascadeTransitively(reading: ZoneReading) throws {
        let t = try TempStore()
        let db = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice", deviceID: "test-device"))
        let missing = try db.modify(saving: [record("child", ["owner": .reference(Reference(recordName: "nobody", action: .deleteSelf))])])
        #expect(missing.saveResults[0].1.error?.code == .referenceViolation)
        #expect(missing.saveResults[0].1.error?.message == "field \"owner\" of record child refers with deleteSelf to record nobody, which does not exist in zone _defaultZone; save nobody first or in the same operation, or use action NONE")
        // A NONE reference may dangle.
        try db.save(record("loose", ["to": .reference(Reference(recordName: "nobody"))]))
        // Target saved in the same operation is fine; a chain root ← a ← b ← c, and d pointing with NONE.
        let chain = try db.modify(saving: [
            record("c", ["up": .reference(Reference(recordName: "b", action: .deleteSelf))]),
            record("b", ["up": .reference(Reference(recordName: "a", action: .deleteSelf))]),
            record("a", ["ups": .list(.reference, [.reference(Reference(recordName: "root", action: .deleteSelf))])]),
            record("root"),
            record("d", ["up": .reference(Reference(recordName: "a"))]),
        ])
        #expect(chain.error == nil)
        let result = try db.modify(saving: [], deleting: [id("root")])
        #expect(result.deletedRecordIDs.map(\.recordName) == ["root"], "cascaded deletions are not reported per item")
        #expect(db.fetch(["root", "a", "b", "c"].map { id($0) }).allSatisfy { $0.1.error?.code == .unknownItem })
        #expect(try db.record(for: id("d"))["up"] != nil)
        let changes = try db.changes(since: nil)
        #expect(Set(changes.changed.map(\.recordID.recordName)) == ["loose", "d"])
    }

    @Test(arguments: [ZoneReading.inMemory, .indexed])
    func deletingARecordTargetedInTheSameOperationFails(reading: ZoneReading) throws {
        let t = try TempStore()
        let db = try t.reopen(reading: reading).container().database(.private, caller: Caller(userName: "alice", deviceID: "test-device"))
        try db.save(record("t"))
        let r = try db.modify(saving: [record("s", ["to": .reference(Reference(recordName: "t", action: .deleteSelf))])], deleting: [id("t")])
        #expect(r.saveResults[0].1.error?.code == .referenceViolation)
        #expect(r.deleteResults[0].1.error?.code == .batchRequestFailed)
        #expect((try? db.record(for: id("t"))) != nil)
    }

    /// Deletes.
    @Test func deletingAMissingRecordIsUnknownItem() throws {
        let t = try TempStore()
        let db = try t.db()
        do {
            try db.delete(id("ghost"))
            Issue.record("expected unknownItem")
        } catch {
            #expect(error.code == .unknownItem)
            #expect(error.message.contains("ghost"))
        }
    }

    /// The record size limit and the item limit.
    @Test func limitsOnRecordSizeAndItemsPerOperation() throws {
        let t = try TempStore()
        let db = try t.db()
        let key = "blob"
        let exact = 1_048_576 - key.utf8.count
        try db.save(record("big", [key: .bytes(Data(count: exact))]))
        let over = try db.modify(saving: [record("big2", [key: .bytes(Data(count: exact + 1))])])
        #expect(over.saveResults[0].1.error?.code == .limitExceeded)
        #expect(over.saveResults[0].1.error?.message.contains("at most 1048576 bytes") == true)

        let many = (0..<401).map { record("r\($0)") }
        #expect { try db.modify(saving: many) } throws: { ($0 as? CKError)?.code == .limitExceeded }
        let ok = try db.modify(saving: Array(many.prefix(400)))
        #expect(ok.savedRecords.count == 400)
    }

    /// Field types and the schema of each environment.
    @Test func schemaGrowsInDevelopmentAndIsFixedInProduction() throws {
        let t = try TempStore()
        let dev = try t.db()
        try dev.save(record("a", type: "Artist", ["name": .string("x")]))
        do { try dev.save(record("b", type: "Artist", ["name": .int64(3)])); Issue.record("type change accepted") } catch {
            #expect(error.code == .invalidArguments)
            #expect(error.message.contains("is STRING"))
        }
        let prod = try t.db(environment: .production)
        do { try prod.save(record("a", type: "Artist", ["name": .string("x")])); Issue.record("new type accepted in production") } catch {
            #expect(error.message.contains("production schema"))
        }
        try t.store.container().schema.deploy()
        try prod.save(record("a", type: "Artist", ["name": .string("x")]))
        do { try prod.save(record("b", type: "Artist", ["name": .string("y"), "age": .int64(3)])); Issue.record("new field accepted in production") } catch {
            #expect(error.message.contains("field \"age\" does not exist"))
        }
        // Environments are kept apart.
        #expect(try dev.record(for: id("a"))["name"] == .string("x"))
        try dev.save(record("dev-only", type: "Artist"))
        #expect(prod.fetch([id("dev-only")])[0].1.error?.code == .unknownItem)
    }

    /// Quota exceeded changes nothing; a delete still succeeds.
    @Test func quotaExceededThenADeleteStillSucceeds() throws {
        var settings = StoreSettings()
        settings.privateQuotaBytes = 10_000
        let t = try TempStore(settings: settings)
        let db = try t.db()
        try db.save(record("a", ["s": .string(String(repeating: "x", count: 6_000))]))
        #expect(try db.usage() == 6_001)
        let over = try db.modify(saving: [record("b", ["s": .string(String(repeating: "y", count: 6_000))]), record("c")])
        #expect(over.saveResults[0].1.error?.code == .quotaExceeded)
        #expect(over.saveResults[1].1.error?.code == .batchRequestFailed)
        #expect(db.fetch([id("b"), id("c")]).allSatisfy { $0.1.error?.code == .unknownItem })
        try db.delete(id("a"))
        #expect(try db.usage() == 0)
        try db.save(record("b", ["s": .string(String(repeating: "y", count: 6_000))]))
        // Another user's private data counts against that user's quota only.
        try t.db(user: "bob").save(record("b", ["s": .string(String(repeating: "y", count: 6_000))]))
    }

    /// The client's token comes back with fetch changes.
    @Test func clientChangeTokenIsKeptWithTheZone() throws {
        let t = try TempStore()
        let db = try t.db()
        _ = try db.modify(saving: [record("a")], options: ModifyOptions(clientChangeToken: Data("mine-1".utf8)))
        _ = try db.modify(saving: [record("b")])
        #expect(try db.changes(since: nil).clientChangeToken == Data("mine-1".utf8))
        // The token comes back with changes fetched since a later point too: it tells the
        // client which of its own changes were applied, whatever else changed since.
        let later = try db.changes(since: nil).token
        _ = try db.modify(saving: [record("c")])
        #expect(try db.changes(since: later).clientChangeToken == Data("mine-1".utf8))
    }

    /// Client change tokens after compaction: tokens in the kept log still come back.
    @Test func clientChangeTokenSurvivesLogCompaction() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 4_000 })
        let db = try t.db()
        try savePadded(db, count: 30)
        _ = try db.modify(saving: [record("a")], options: ModifyOptions(clientChangeToken: Data("after-compaction".utf8)))
        #expect(try db.changes(since: nil).clientChangeToken == Data("after-compaction".utf8))
    }

    /// Client change tokens when compaction drops the entry that gave the token: the checkpoint keeps it in
    /// zone.json. The checkpoint finds it without parsing the log, from the lines that start
    /// like an entry with a token; a field named like the token must not be taken for it.
    @Test func clientChangeTokenOutlivesItsCompactedEntry() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 4_000 })
        let db = try t.db()
        _ = try db.modify(saving: [record("first")], options: ModifyOptions(clientChangeToken: Data("older".utf8)))
        _ = try db.modify(saving: [record("tok")], options: ModifyOptions(clientChangeToken: Data("kept".utf8)))
        try savePadded(db, count: 40, fields: ["clientChangeToken": .string("not-a-token")])
        let log = try String(contentsOfFile: db.zoneFolder(ZoneID.defaultZoneName).logPath, encoding: .utf8)
        #expect(!log.contains(Data("kept".utf8).base64EncodedString()), "the token's entry was compacted away")
        #expect(try db.changes(since: nil).clientChangeToken == Data("kept".utf8))
    }

    /// The log size past which ``compactingZone()`` compacts its log.
    static let compactionLimit = 64 << 10

    /// A zone whose log is compacted past ``compactionLimit`` bytes and never checkpointed by
    /// the count of its entries, and the storage whose log and reads the tests look at.
    static func compactingZone() throws -> (TempStore, Database, ZoneFolder) {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = Int64(compactionLimit); $0.checkpointEvery = 1_000_000 })
        let db = try t.db()
        return (t, db, db.zoneFolder(ZoneID.defaultZoneName))
    }

    /// Compaction keeps the longest run of whole entries at the log's end that fits in half
    /// the limit (the last entry whatever its size), and gets there without reading the log
    /// whole: every read is a piece of at most half the limit, and when the last entries give
    /// client change tokens the checkpoint reads little more than what it keeps. The token
    /// noted at each checkpoint is the newest one given, after phases with and without tokens.
    @Test func compactionKeepsTheNewestHalfReadingItInPieces() throws {
        let (t, db, storage) = try Self.compactingZone()
        let limit = Self.compactionLimit
        func log() throws -> [UInt8] { try Array(Data(contentsOf: URL(fileURLWithPath: storage.logPath))) }
        /// The kept part as specified: the longest suffix of whole lines within `keep` bytes, at
        /// least the last line.
        func keptSuffix(_ bytes: [UInt8], keep: Int) -> [UInt8] {
            var starts = [0]
            for (i, b) in bytes.enumerated() where b == 0x0A && i + 1 < bytes.count { starts.append(i + 1) }
            let cut = starts.first { bytes.count - $0 <= keep } ?? starts.last!
            return Array(bytes[cut...])
        }
        var compactions = 0, newestToken: String?
        for i in 0..<240 {
            // Tokens on every save, then on none, then on every tenth.
            let token: String? = i < 80 ? "t\(i)" : i < 160 ? nil : (i % 10 == 0 ? "t\(i)" : nil)
            if let token { newestToken = token }
            let before = try log()
            let reads = Mutex<[Int]>([])
            storage.observers.logRead = { n in reads.withLock { $0.append(n) } }
            _ = try db.modify(saving: [record("r\(i)", ["pad": .string(String(repeating: "p\(i % 7)", count: 400))])],
                              options: ModifyOptions(clientChangeToken: token.map { Data($0.utf8) }))
            storage.observers.logRead = nil
            let after = try log()
            guard after.count < before.count else { continue }
            compactions += 1
            // The entry just committed is the kept log's last line; the log compacted was the
            // one before it with that entry appended.
            let lastStart = after.dropLast().lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let whole = before + after[lastStart...]
            #expect(after == keptSuffix(whole, keep: limit / 2), "compaction \(compactions) at save \(i)")
            let pieces = reads.withLock { $0 }
            #expect(pieces.allSatisfy { $0 <= limit / 2 }, "a read of the whole log (\(whole.count) bytes): \(pieces)")
            if i < 80 {
                #expect(pieces.reduce(0, +) <= after.count + (16 << 10), "read \(pieces.reduce(0, +)) bytes to keep \(after.count)")
            }
            let meta = try #require(try JSONParser.parse(try Array(Data(contentsOf: URL(fileURLWithPath: StoreLayout.zoneFile(storage.directory)))))["clientChangeToken"]?.stringValue)
            #expect(Data(base64Encoded: meta) == newestToken.map { Data($0.utf8) }, "zone.json's token at save \(i)")
        }
        #expect(compactions >= 6, "\(compactions) compactions")
        #expect(try db.changes(since: nil).clientChangeToken == Data("t230".utf8))
        // Another opening reads the compacted log and the records the files hold.
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        #expect(try other.record(for: id("r239"))["pad"] == .string(String(repeating: "p\(239 % 7)", count: 400)))
        #expect(try other.changes(since: nil).clientChangeToken == Data("t230".utf8))
    }

    /// An entry larger than the half the compaction keeps: the new log is that entry alone,
    /// whose start is found by reading back from the log's end.
    @Test func compactionKeepsALastEntryLargerThanHalfTheLimit() throws {
        let (t, db, storage) = try Self.compactingZone()
        let limit = Self.compactionLimit
        func log() throws -> [UInt8] { try Array(Data(contentsOf: URL(fileURLWithPath: storage.logPath))) }
        for i in 0..<20 { try db.save(record("small\(i)", ["pad": .string(String(repeating: "s", count: 1_200))])) }
        let before = try log()
        #expect(before.count < limit)
        let big = String(repeating: "b", count: 40_000)
        try db.save(record("big", ["pad": .string(big)]))
        let after = try log()
        // The old log and the big entry passed the limit; what is left is that entry alone.
        #expect(before.count + after.count > limit)
        #expect(after.count > limit / 2)
        #expect(after.dropLast().firstIndex(of: 0x0A) == nil && after.last == 0x0A, "the new log is one entry")
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        #expect(try other.record(for: id("big"))["pad"] == .string(big))
        #expect(try other.record(for: id("small3"))["pad"] == .string(String(repeating: "s", count: 1_200)))
    }

    /// A writer that compacts the log keeps the names it listed and the records it parsed,
    /// following the new file from where its entries end there, so a large zone's writer does
    /// not probe for every new name and list its folder again after each compaction. Another
    /// opening's saves after the compaction are still seen.
    @Test func aWriterKeepsTheNamesAndRecordsItKnowsAcrossItsOwnCompaction() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 32 << 10 })
        let db = try t.db()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        for i in 0..<(ZoneState.minimumProbesBeforeListing + 10) { try db.save(record("n\(i)")) }
        #expect(storage.state.withLock { state in state.knownNames != nil }, "the names are listed by now")
        var compactions = 0
        var previous = try #require(try Syscall.stat(storage.logPath).get()).size
        for i in 0..<120 {
            try db.save(record("p\(i)", ["pad": .string(String(repeating: "p", count: 600))]))
            let log = try #require(try Syscall.stat(storage.logPath).get())
            defer { previous = log.size }
            guard log.size < previous else { continue }
            compactions += 1
            let (names, tail, cached) = storage.state.withLock { state in
                (state.knownNames != nil, (state.tailInode, state.tailOffset), state.cache.contains("p\(i)"))
            }
            #expect(names, "the names are still known after compaction \(compactions)")
            #expect(cached, "the parsed records are kept after compaction \(compactions)")
            #expect(tail == (log.inode, log.size), "the tail follows the new log at its end")
        }
        #expect(compactions >= 2)
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        try other.save(record("theirs"))
        _ = try other.modify(saving: [], deleting: [id("n3")])
        #expect(throws: CKError.self, "a save of a new record by a name another opening took conflicts") { try db.save(record("theirs")) }
        #expect(throws: CKError.self, "another opening's delete is seen") { try db.record(for: id("n3")) }
        #expect(try db.record(for: id("p119"))["pad"] == .string(String(repeating: "p", count: 600)))
    }

    /// Save policies with the zone's names known in memory (after enough saves of new names a
    /// writer lists the folder once and stops probing): a record another process saves or
    /// deletes later is still seen, so a save without its change tag conflicts and a save
    /// with a stale one finds it gone.
    @Test func knownNamesFollowOtherWriters() throws {
        // A cache of one record, so the names, not the cache, answer.
        let t = try TempStore(tuning: .with { $0.cachedRecords = 1 })
        let db = try t.db()
        try db.save(record("old"))
        for i in 0..<(ZoneState.minimumProbesBeforeListing + 10) { try db.save(record("n\(i)")) }
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        #expect(storage.state.withLock { state in state.knownNames != nil }, "the names are listed by now")
        let other = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        try other.save(record("theirs"))
        try other.save(record("filler"))
        do {
            try db.save(record("theirs"))
            Issue.record("a save over a record another writer made did not conflict")
        } catch {
            #expect(error.code == .serverRecordChanged)
        }
        var stale = try db.record(for: RecordID(recordName: "old", zoneID: db.zoneID(ZoneID.defaultZoneName)))
        try other.delete(stale.recordID)
        stale["x"] = .int64(1)
        do {
            try db.save(stale)
            Issue.record("a save of a record deleted by another writer succeeded")
        } catch {
            #expect(error.code == .unknownItem)
        }
        // A deleted name is still known (its hash stays): saved again, it is a new record.
        try db.save(record("old", ["again": .int64(1)]))
        #expect(try other.record(for: id("old"))["again"] == .int64(1))
        try db.delete(id("n0"))
        try db.save(record("n0", ["again": .int64(2)]))
        #expect(try other.record(for: id("n0"))["again"] == .int64(2))
    }

    @Test func publicDataIsSharedAndPrivateDataIsNot() throws {
        let t = try TempStore()
        try t.db(.public, user: "alice").save(record("pub", ["a": .int64(1)]))
        #expect(try t.db(.public, user: "bob").record(for: id("pub"))["a"] == .int64(1))
        try t.db(user: "alice").save(record("priv"))
        #expect(try t.db(user: "bob").fetch([id("priv")])[0].1.error?.code == .unknownItem)
        #expect(try t.db(user: "alice").userRecordName != t.db(user: "bob").userRecordName)
        #expect(try t.db(user: "alice").userRecordName == t.reopen().container().userRecordName(for: "alice"), "a user record name is stable across openings of the store")
    }

    @Test func assetsAreStoredContentAddressedBesideTheZone() throws {
        let t = try TempStore()
        let db = try t.db()
        let file = t.path + "/input.bin"
        try Data("picture bytes".utf8).write(to: URL(fileURLWithPath: file))
        let saved = try db.save(record("pic", ["image": .asset(Asset(file: file))]))
        guard case .asset(let a)? = saved["image"] else { Issue.record("no asset"); return }
        #expect(a.size == 13)
        #expect(a.fileChecksum == AssetHasher.sha256Hex(Array("picture bytes".utf8)))
        #expect(FileManager.default.contents(atPath: try db.assetFile(a)) == Data("picture bytes".utf8))
        #expect(try db.usage() == Int64(saved.size) + 13)
        let missing = try db.modify(saving: [record("pic2", ["image": .asset(Asset(file: t.path + "/nope"))])])
        #expect(missing.saveResults[0].1.error?.code == .assetFileNotFound)
    }
}
