import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A writer killed with SIGKILL at random moments loses no acknowledged batch and never
/// leaves one half-applied, nor an index that answers otherwise than the records; `ckfs fsck`
/// is clean after every kill.
@Suite struct CrashTests {
    static let kills = 200

    @Test func killedWriterLosesNothingAcknowledged() throws {
        // A small log limit keeps each round's fsck quick and puts compactions among the kills.
        let cli = try CLIFixture(initArgs: ["--compact-log-bytes", "131072"])
        var rng = SystemRandomNumberGenerator()
        var known: Int64 = 0 // the batch the store is known to hold
        var repairs = 0
        var acknowledged = 0
        for round in 0..<Self.kills {
            // Every fourth writer is killed at a moment counted from its start (a child takes a
            // while to start, hence the offset), which may be before its first commit; the
            // others within 30 ms after their first acknowledged batch, so
            // every kill lands mid-work however loaded the machine is.
            let lines = round % 4 == 0
                ? try cli.runKilled(["debug", "crash-writer"], after: UInt32.random(in: 60_000...150_000, using: &rng))
                : try cli.runKilledAfterFirstLine(["debug", "crash-writer"], then: UInt32.random(in: 0...30_000, using: &rng))
            let reported = lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil }.max() ?? known
            acknowledged += lines.count

            // The index the killed writer kept (fsck made it after the first kill) answers as the
            // records do, before fsck looks at anything.
            if round > 0 {
                let query = RecordQuery(recordType: "Crash", predicate: .compare("batch", .greater, .int(known - 8)),
                                        sortDescriptors: [QuerySortDescriptor(key: "batch", ascending: false)])
                let indexed = try Store.open(at: cli.store, reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))
                let fromIndex = try indexed.query(query, limit: 500).records.map(\.recordID.recordName)
                let truth = try cli.database().allRecords().filter { query.predicate.matches($0) }.sorted { a, b in
                    RecordQuery.compare([a["batch"]], a.recordID.recordName, [b["batch"]], b.recordID.recordName, query.sortDescriptors) < 0
                }.map(\.recordID.recordName)
                try #require(fromIndex == truth, "round \(round): the index answered \(fromIndex), the records \(truth)")
                try #require((indexed.zoneStorage(ZoneID.defaultZoneName) as? ZoneFolder)?.indexSlot.file != nil, "round \(round): the index answered, not the records")
            }

            let fsck = cli.run(["fsck"])
            try #require(fsck.status == 0, "round \(round): fsck: \(fsck.stderr)")
            try #require(!fsck.stdout.contains("index (index.sqlite) differed") && !fsck.stdout.contains("index (index.sqlite) was damaged"),
                         "round \(round): \(fsck.stdout)")
            if fsck.stdout.contains("repaired:") { repairs += 1 }

            let db = try cli.database()
            let fixed = db.fetch((0..<4).map { RecordID(recordName: "fixed-\($0)") })
            // A writer killed before its first commit (a slow start under load) leaves nothing.
            if reported == 0, fixed.allSatisfy({ $0.1.error?.code == .unknownItem }) { continue }
            let batches = try fixed.map { (_, r) -> Int64 in
                guard case .int64(let b)? = try r.get()["batch"] else { throw CKError(.internalError, "no batch") }
                return b
            }
            try #require(batches.count == 4, "round \(round): fixed records missing")
            let b = batches[0]
            try #require(batches.allSatisfy { $0 == b }, "round \(round): half-applied batch: \(batches)")
            try #require(b >= reported, "round \(round): acknowledged batch \(reported) lost; store has \(b)")
            try #require(b <= reported + 1, "round \(round): store has batch \(b), more than one past \(reported)")
            // b-j exists exactly for the last five batches.
            let names = Set(try db.allRecords().map(\.recordID.recordName).filter { $0.hasPrefix("b-") })
            let expected = Set((max(1, b - 4)...b).map { "b-\($0)" })
            try #require(names == expected, "round \(round): b-records \(names.sorted()) but expected \(expected.sorted())")
            known = b
        }
        print("crash test: \(Self.kills) kills, \(acknowledged) acknowledged batches, last batch \(known), fsck repaired after \(repairs) kills")
        // Three writers in four commit at least once before their kill.
        #expect(known > 100, "the writer made progress between kills")
    }

    /// Notifications and durability: a notification is appended and synced before its save is acknowledged, so
    /// every acknowledged batch has its notification, none names a batch the store does not
    /// hold, none comes twice; the notification log stays readable through every kill. (A
    /// batch committed but killed before its notification was written has none: see the
    /// at-most-once note in docs/Durability.md.)
    @Test func killedWriterKeepsTheNotificationsOfAcknowledgedSaves() throws {
        let cli = try CLIFixture()
        let sub = cli.run(["subscription", "create", "--type", "Crash", "--on", "create", "--predicate", "batch > 0", "--keys", "batch"])
        try #require(sub.status == 0, "\(sub.stderr)")
        var rng = SystemRandomNumberGenerator()
        var reported: Int64 = 0
        var acknowledged: Set<Int64> = []
        var torn = 0
        for round in 0..<60 {
            let lines = round % 4 == 0
                ? try cli.runKilled(["debug", "crash-writer"], after: UInt32.random(in: 60_000...150_000, using: &rng))
                : try cli.runKilledAfterFirstLine(["debug", "crash-writer"], then: UInt32.random(in: 0...30_000, using: &rng))
            let saved = lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil }
            acknowledged.formUnion(saved)
            reported = saved.max() ?? reported
            let fsck = cli.run(["fsck"])
            try #require(fsck.status == 0, "round \(round): fsck: \(fsck.stderr)")
            if fsck.stdout.contains("torn last line") { torn += 1 }
            let db = try cli.database()
            guard case .success(let fixed) = db.fetch([RecordID(recordName: "fixed-0")])[0].1, case .int64(let held)? = fixed["batch"] else {
                try #require(reported == 0, "round \(round): acknowledged batch \(reported) but no fixed-0")
                continue
            }
            let log = try notificationLogFile(Store.open(at: cli.store).container(), user: "alice")
            let contents = try log.contents()
            try #require(contents.badLines.isEmpty, "round \(round): unreadable notification lines \(contents.badLines)")
            // One creation per batch: b-N (and fixed-0…3, created by batch 1).
            let batchRecords = contents.notifications.map(\.notification).filter { $0.recordID?.recordName.hasPrefix("b-") == true }
            let notified = Set(batchRecords.compactMap { n -> Int64? in
                if case .int64(let b)? = n.recordFields["batch"] { b } else { nil }
            })
            let missing = acknowledged.subtracting(notified).sorted()
            try #require(missing.isEmpty, "round \(round): acknowledged batches \(missing.prefix(5)) have no notification")
            try #require(notified.allSatisfy { $0 <= held }, "round \(round): a notification names a batch past the store's \(held)")
            try #require(batchRecords.count == notified.count, "round \(round): a batch was notified twice")
        }
        print("notification crash test: 60 kills, \(acknowledged.count) acknowledged batches, last \(reported), torn notification lines cut after \(torn) kills")
        // Three writers in four commit at least once before their kill.
        #expect(reported > 30, "the writer made progress between kills")
    }
}
