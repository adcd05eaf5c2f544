import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `changes(since:limit:)` finds where its page starts by bisecting the log and reads only the
/// page: its answers are those of a scan of the whole history, for every token and limit,
/// across compaction, and a small page of a long log reads a small part of it.
@Suite struct ChangePageTests {
    /// The answer from the whole history, as changes were computed before pages: each record
    /// once at its last change, whole entries until `limit` changes, and the client change
    /// token of the last entry up to the page's end that gave one.
    static func reference(_ db: Database, since seq: Int64, limit: Int?) throws -> (changed: [String], deleted: [String], last: Int64, more: Bool, client: Data?)? {
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let history = try storage.history()
        guard let entries = history.entries(after: seq) else { return nil }
        var order: [String] = []
        var gone: Set<String> = []
        var last = seq
        var count = 0
        var more = false
        for (n, entry) in entries.enumerated() {
            for d in entry.deleted {
                order.removeAll { $0 == d.recordName }
                order.append(d.recordName)
                gone.insert(d.recordName)
                count += 1
            }
            for r in entry.saved {
                order.removeAll { $0 == r.recordID.recordName }
                order.append(r.recordID.recordName)
                gone.remove(r.recordID.recordName)
                count += 1
            }
            last = entry.seq
            if let limit, count >= limit, n < entries.count - 1 {
                more = true
                break
            }
        }
        let meta = try storage.readMeta()
        let client = history.clientChangeToken(upTo: last) ?? meta.clientChangeToken
        return (order.filter { !gone.contains($0) }, order.filter { gone.contains($0) }, last, more, client)
    }

    /// A history of single saves, batches, deletions, saves of the same records again and
    /// client change tokens, long enough to be compacted twice.
    static func makeHistory(_ db: Database) throws {
        for i in 0..<120 {
            switch i % 6 {
            case 0:
                _ = try db.modify(saving: [record("a\(i % 13)", ["i": .int64(Int64(i))]), record("b\(i)")],
                                  options: ModifyOptions(clientChangeToken: Data("client-\(i)".utf8)))
            case 1:
                _ = try db.modify(saving: [], deleting: [id("b\(i - 1)")])
            case 2:
                _ = try db.modify(saving: [record("a\(i % 13)", ["i": .int64(Int64(i)), "pad": .string(String(repeating: "x", count: 200))])])
            default:
                try db.save(record("c\(i % 29)", ["i": .int64(Int64(i))]), policy: .allKeys)
            }
        }
    }

    @Test func everyTokenAndLimitAnswersAsTheWholeHistory() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 12_000; $0.checkpointEvery = 7 })
        let db = try t.db()
        try Self.makeHistory(db)
        try Self.compareEveryToken(db)
    }

    /// With the zone's index, client change tokens come from its `tokens` table instead of
    /// the log read backwards: the same answers as the log gives, as the table is kept up
    /// from new entries, and also from an index that was deleted, cut short, restored from an
    /// older backup (it is made again, or brought up to date), or made again.
    @Test func clientChangeTokensFromTheIndexAnswerAsTheLog() throws {
        // A log long enough to hold several entries with tokens between checkpoints.
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 40_000; $0.checkpointEvery = 50 })
        let db = try t.db()
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        _ = try #require(storage.currentIndex())
        // As an older ckfs made it: no tokens' tables. They are made at the first fetch that
        // asks for a token.
        try SQLiteDatabase(path: storage.indexPath, durability: .rebuildable, create: false).execute("DROP TABLE IF EXISTS tokens; DROP TABLE IF EXISTS tokens_state")
        try Self.makeTokenHistory(db, round: 0, count: 70)
        try Self.compareEveryToken(db)
        let index = try #require(storage.currentIndex())
        let now = try db.currentChangeToken()
        let expected = try #require(try Self.reference(db, since: now.seq, limit: nil)).client
        let held = try index.read { (reader) throws(CKError) in try reader.clientChangeToken(upTo: now.seq) }
        #expect(held != nil && held == expected)
        let backup = storage.indexPath + ".backup"
        try ZoneIndexFileTests.copyIndex(storage.indexPath, to: backup)
        // The answer is the index's: a token put in it alone comes back.
        try index.update(waitingMilliseconds: 1_000) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
            try writer.putClientChangeToken(Data("from-the-index".utf8), seq: now.seq)
            return state
        }
        #expect(try db.changes(since: now).clientChangeToken == Data("from-the-index".utf8))
        try index.update(waitingMilliseconds: 1_000) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
            try writer.removeTokens(after: now.seq - 1)
            return state
        }
        // A token past the tokens' own state (a table ahead of it) is not taken for an answer:
        // the catch-up removes what lies past that state before it adds the entries after it.
        try index.update(waitingMilliseconds: 1_000) { (state, writer) throws(CKError) -> ZoneIndexFile.State? in
            try writer.putClientChangeToken(Data("ahead".utf8), seq: now.seq + 1)
            return state
        }
        _ = try db.modify(saving: [record("no-token")])
        let next = try db.currentChangeToken()
        #expect(next.seq == now.seq + 1)
        #expect(try db.changes(since: next).clientChangeToken == expected, "the last token given, not one past the tokens' state")

        // Kept up from the entries after the last it holds, or, once the log was compacted
        // past that, from the log's token lines.
        try Self.makeTokenHistory(db, round: 1, count: 20)
        try Self.compareEveryToken(db, "kept up")
        try Self.makeTokenHistory(db, round: 2, count: 70)
        try Self.compareEveryToken(db, "kept up across compaction")
        for fault in ["older backup", "cut short", "deleted", "made again"] {
            for suffix in ["-wal", "-shm"] { _ = Syscall.unlink(storage.indexPath + suffix) }
            switch fault {
            case "older backup":
                _ = Syscall.unlink(storage.indexPath)
                try ZoneIndexFileTests.copyIndex(backup, to: storage.indexPath)
            case "cut short":
                #expect(truncate(storage.indexPath, 5_000) == 0)
            case "deleted":
                _ = Syscall.unlink(storage.indexPath)
            default:
                _ = Syscall.unlink(storage.indexPath)
                _ = try #require(storage.currentIndex())
            }
            try Self.compareEveryToken(db, fault)
        }
    }

    /// Saves of new records, every fifth with a client change token of its own.
    static func makeTokenHistory(_ db: Database, round: Int, count: Int = 90) throws {
        for i in 0..<count {
            let options = ModifyOptions(clientChangeToken: i % 5 == 0 ? Data("round-\(round)-\(i)".utf8) : nil)
            let result = try db.modify(saving: [record("t\(round)-\(i)", ["pad": .string(String(repeating: "y", count: 100))])], options: options)
            #expect(result.error == nil)
        }
    }

    /// Every token and limit's page against ``reference(_:since:limit:)``.
    static func compareEveryToken(_ db: Database, _ context: String = "") throws {
        let now = try db.currentChangeToken()
        var expired = 0
        var compared = 0
        for seq in stride(from: now.seq, through: 0, by: -1) {
            for limit in [1, 2, 5, 17, nil] as [Int?] {
                let token = ChangeToken(epoch: now.epoch, seq: seq)
                guard let expected = try Self.reference(db, since: seq, limit: limit) else {
                    #expect { try db.changes(since: token, limit: limit) } throws: { ($0 as? CKError)?.code == .changeTokenExpired }
                    expired += 1
                    continue
                }
                let got = try db.changes(since: token, limit: limit)
                let at = "\(context) since \(seq), limit \(String(describing: limit))"
                #expect(got.changed.map(\.recordID.recordName) == expected.changed, "\(at)")
                #expect(got.deleted.map(\.recordName) == expected.deleted, "\(at)")
                #expect(got.token.seq == expected.last && got.moreComing == expected.more, "\(at)")
                #expect(got.clientChangeToken == expected.client, "\(at)")
                compared += 1
            }
        }
        #expect(expired > 0, "the log was compacted, so the oldest tokens expired")
        #expect(compared > 50)
        // The first fetch's client change token is read the same way.
        let first = try db.changes(since: nil, limit: 3)
        let whole = try Self.reference(db, since: now.seq, limit: nil)
        #expect(first.clientChangeToken == whole?.client)
    }

    /// A page of ten changes at the end of a long log reads a small part of the log, as the
    /// client change token comes from the last checkpoint's `zone.json` or a near entry.
    @Test func aSmallPageReadsLittleOfALongLog() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 64 << 20; $0.checkpointEvery = 100 })
        let db = try t.db()
        for i in 0..<400 {
            let options = ModifyOptions(savePolicy: .allKeys, clientChangeToken: i == 150 ? Data("app-150".utf8) : nil)
            _ = try db.modify(saving: [record("r\(i)", ["text": .string(String(repeating: "lorem ipsum ", count: 40))])], options: options)
        }
        let token = try db.currentChangeToken()
        for i in 0..<10 { try db.save(record("late\(i)")) }
        let storage = db.zoneFolder(ZoneID.defaultZoneName)
        let logBytes = try #require(try Syscall.stat(storage.logPath).get()).size
        let reads = Counter()
        storage.observers.logRead = { reads.add($0) }
        let page = try db.changes(since: token, limit: 10)
        #expect(page.changed.map(\.recordID.recordName) == (0..<10).map { "late\($0)" } && !page.moreComing)
        #expect(page.clientChangeToken == Data("app-150".utf8))
        #expect(reads.value < Int(logBytes) / 10, "read \(reads.value) of \(logBytes) bytes")
    }

    /// A first page from a new opening with the zone's index: the index gives the names and the
    /// client change token, and checking the index against the log reads the log's last entry
    /// back from the end, not the lines a bisection of a log of large entries probes.
    @Test func aFirstPageFromTheIndexReadsOnlyTheLogsLastEntry() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 64 << 20; $0.checkpointEvery = 1_000 })
        let db = try t.db()
        let text = FieldValue.string(String(repeating: "lorem ipsum ", count: 200))
        for i in 0..<60 {
            let options = ModifyOptions(savePolicy: .allKeys, clientChangeToken: i == 30 ? Data("app-30".utf8) : nil)
            _ = try db.modify(saving: (0..<20).map { record("r\(i)-\($0)", ["text": text]) }, options: options)
        }
        // The index, with its client change tokens (made at the first change fetch after it).
        _ = try #require(db.zoneFolder(ZoneID.defaultZoneName).currentIndex())
        #expect(try db.changes(since: nil, limit: 1).clientChangeToken == Data("app-30".utf8))
        t.store.waitForRecordFiles()
        let log = try #require(try Syscall.readFile(db.zoneFolder(ZoneID.defaultZoneName).logPath).get())
        let lastEntry = log.dropLast().count - (log.dropLast().lastIndex(of: 0x0A) ?? -1) - 1
        try #require(lastEntry > 40_000 && log.count > 50 * lastEntry, "entries of \(lastEntry) bytes, a log of \(log.count)")

        let cold = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        let storage = cold.zoneFolder(ZoneID.defaultZoneName)
        let reads = Counter()
        storage.observers.logRead = { reads.add($0) }
        let page = try cold.changes(since: nil, limit: 10)
        #expect(page.changed.count == 10 && page.moreComing)
        #expect(page.clientChangeToken == Data("app-30".utf8))
        #expect(reads.value > 0 && reads.value < lastEntry + 16_384, "read \(reads.value) bytes of a \(log.count)-byte log whose last entry has \(lastEntry)")
    }

    /// A page after a recent token, in a log of large entries, reads the log back from its end
    /// to the token's entry, whose number is in the tail of its line, not the lines a
    /// bisection's probes fall in (each read to its end).
    @Test func aPageAfterARecentTokenReadsTheLogsEndOnly() throws {
        let t = try TempStore(tuning: .with { $0.compactLogBytes = 64 << 20; $0.checkpointEvery = 1_000 })
        let db = try t.db()
        let text = FieldValue.string(String(repeating: "lorem ipsum ", count: 200))
        for i in 0..<60 {
            _ = try db.modify(saving: (0..<20).map { record("r\(i)-\($0)", ["text": text]) }, options: ModifyOptions(savePolicy: .allKeys))
        }
        let token = try db.currentChangeToken()
        for i in 0..<10 { _ = try db.save(record("late\(i)")) }
        // The index, with its client change tokens (made at the first change fetch after it).
        _ = try #require(db.zoneFolder(ZoneID.defaultZoneName).currentIndex())
        _ = try db.changes(since: nil, limit: 1)
        t.store.waitForRecordFiles()
        let log = try #require(try Syscall.readFile(db.zoneFolder(ZoneID.defaultZoneName).logPath).get())
        try #require(log.count > 2_000_000, "a log of \(log.count) bytes")

        let cold = try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice", deviceID: "other"), environment: .development)
        let storage = cold.zoneFolder(ZoneID.defaultZoneName)
        let reads = Counter()
        storage.observers.logRead = { reads.add($0) }
        let page = try cold.changes(since: token, limit: 10)
        #expect(page.changed.map(\.recordID.recordName) == (0..<10).map { "late\($0)" } && !page.moreComing)
        #expect(reads.value > 0 && reads.value < 40_000, "read \(reads.value) bytes of a \(log.count)-byte log")
        // A token of an old entry still bisects, and answers as the whole history does.
        let old = try #require(try storage.history().entries.dropLast(30).last).seq
        let reference = try #require(try Self.reference(cold, since: old, limit: 25))
        let oldPage = try cold.changes(since: ChangeToken(epoch: token.epoch, seq: old), limit: 25)
        #expect(oldPage.changed.map(\.recordID.recordName) == reference.changed && oldPage.moreComing == reference.more)
    }

    /// A writer that died mid-append leaves a torn line at the log's end: a page reads up to the
    /// last committed entry and answers as before, without the torn bytes.
    @Test func aTornTailIsNotRead() throws {
        let t = try TempStore()
        let db = try t.db()
        let token = try db.currentChangeToken()
        for i in 0..<5 { try db.save(record("r\(i)")) }
        let before = try db.changes(since: token, limit: 3)
        let path = db.zoneFolder(ZoneID.defaultZoneName).logPath
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"body":{"deleted":[],"saved":[{"recordName":"torn"#.utf8))
        handle.closeFile()
        let after = try db.changes(since: token, limit: 3)
        #expect(after.changed.map(\.recordID.recordName) == before.changed.map(\.recordID.recordName) && after.token == before.token)
        let rest = try db.changes(since: after.token)
        #expect(rest.changed.map(\.recordID.recordName) == ["r3", "r4"] && !rest.moreComing)
    }

    /// Counts bytes. `@unchecked Sendable`: `total` is only touched under `lock`.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var total = 0
        func add(_ n: Int) { lock.withLock { total += n } }
        var value: Int { lock.withLock { total } }
    }
}
