import Foundation
import Testing
@testable import CloudStore

/// `changes(since:limit:)` finds where its page starts by bisecting the log and reads only the
/// page: its answers are those of a scan of the whole history, for every token and limit,
/// across compaction, and a small page of a long log reads a small part of it.
@Suite struct ChangePageTests {
    /// The answer from the whole history, as changes were computed before pages: each record
    /// once at its last change, whole entries until `limit` changes, and the client change
    /// token of the last entry up to the page's end that gave one.
    static func reference(_ db: Database, since seq: Int64, limit: Int?) throws -> (changed: [String], deleted: [String], last: Int64, more: Bool, client: Data?)? {
        let storage = db.zoneStorage(ZoneID.defaultZoneName)
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
                #expect(got.changed.map(\.recordID.recordName) == expected.changed, "since \(seq), limit \(String(describing: limit))")
                #expect(got.deleted.map(\.recordName) == expected.deleted, "since \(seq), limit \(String(describing: limit))")
                #expect(got.token.seq == expected.last && got.moreComing == expected.more, "since \(seq), limit \(String(describing: limit))")
                #expect(got.clientChangeToken == expected.client, "since \(seq), limit \(String(describing: limit))")
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
        let storage = db.zoneStorage(ZoneID.defaultZoneName)
        let logBytes = try #require(try Syscall.stat(storage.logPath).get()).size
        let reads = Counter()
        storage.locked { storage.logReadObserver = { reads.add($0) } }
        let page = try db.changes(since: token, limit: 10)
        #expect(page.changed.map(\.recordID.recordName) == (0..<10).map { "late\($0)" } && !page.moreComing)
        #expect(page.clientChangeToken == Data("app-150".utf8))
        #expect(reads.value < Int(logBytes) / 10, "read \(reads.value) of \(logBytes) bytes")
    }

    /// A writer that died mid-append leaves a torn line at the log's end: a page reads up to the
    /// last committed entry and answers as before, without the torn bytes.
    @Test func aTornTailIsNotRead() throws {
        let t = try TempStore()
        let db = try t.db()
        let token = try db.currentChangeToken()
        for i in 0..<5 { try db.save(record("r\(i)")) }
        let before = try db.changes(since: token, limit: 3)
        let path = db.zoneStorage(ZoneID.defaultZoneName).logPath
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
