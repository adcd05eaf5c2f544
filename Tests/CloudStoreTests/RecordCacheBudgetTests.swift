import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The parsed records a process keeps have one bound for all its zones, however many zones it
/// reads: each zone's cache takes from the store object's budget and gives back what leaves.
@Suite struct RecordCacheBudgetTests {
    /// The bytes the zones' caches say they hold, added up.
    static func held(_ store: Store, _ db: Database, zones: [String]) -> Int {
        zones.reduce(0) { total, zone in total + db.zoneFolder(zone).state.withLock { state in state.cache.bytes } }
    }

    /// 16 zones of 40 records of 2 KB, and another opening that keeps at most 64 records a
    /// zone: 512 KiB for all its zones, less than the 16 zones' records (about 1.6 MB).
    static func sixteenZones() throws -> (t: TempStore, zones: [String], body: String, reader: Store, db: Database) {
        let t = try TempStore()
        let writer = try t.db()
        let zones = (0..<16).map { "Zone\($0)" }
        let body = String(repeating: "x", count: 2_000)
        for zone in zones {
            try writer.createZone(zone)
            _ = try writer.modify(saving: (0..<40).map { record("r\($0)", zone: zone, ["body": .string(body + "\($0)")]) })
        }
        // The reader finds every record in its file, none as a version the files lack.
        t.store.waitForRecordFiles()
        let reader = try t.reopen(reading: .indexedCaching(cachedRecords: 64))
        let db = try reader.container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        return (t, zones, body, reader, db)
    }

    @Test func manyZonesReadTogetherStayWithinOneBudget() throws {
        let (t, zones, body, reader, db) = try Self.sixteenZones()
        defer { withExtendedLifetime(t) {} }
        #expect(reader.cacheBudget.limit == 64 * 8_192)
        for _ in 0..<2 {
            for zone in zones {
                for i in 0..<40 {
                    let r = try db.record(for: RecordID(recordName: "r\(i)", zoneID: db.zoneID(zone)))
                    #expect(r["body"] == .string(body + "\(i)"))
                }
                #expect(reader.cacheBudget.inUse <= reader.cacheBudget.limit)
            }
        }
        #expect(reader.cacheBudget.inUse == Self.held(reader, db, zones: zones), "every byte taken is a cached record's")
        #expect(reader.cacheBudget.inUse > reader.cacheBudget.limit / 2, "the budget is used, not left empty")

        // Records deleted leave the caches and give their bytes back.
        let before = reader.cacheBudget.inUse
        _ = try db.modify(saving: [], deleting: (0..<40).map { RecordID(recordName: "r\($0)", zoneID: db.zoneID(zones.last!)) })
        #expect(reader.cacheBudget.inUse == Self.held(reader, db, zones: zones))
        #expect(db.zoneFolder(zones.last!).state.withLock { state in state.cache.isEmpty })
        #expect(reader.cacheBudget.inUse <= before)
    }

    /// Once the first zones read hold the budget, a zone read later still gets room: the
    /// zones that used none of their records since they were last asked let half of them go.
    /// Without the asks the first zones read would keep the budget for as long as the process
    /// runs, and every read of the others would go to their files.
    @Test func theZonesReadLatelyGetTheRoom() throws {
        let (t, zones, body, reader, db) = try Self.sixteenZones()
        defer { withExtendedLifetime(t) {} }
        func read(_ zone: String) throws {
            for i in 0..<40 {
                let r = try db.record(for: RecordID(recordName: "r\(i)", zoneID: db.zoneID(zone)))
                #expect(r["body"] == .string(body + "\(i)"))
            }
        }
        for zone in zones.prefix(8) { try read(zone) }
        let late = zones.last!
        let storage = db.zoneFolder(late)
        for _ in 0..<8 {
            try read(late)
            usleep(60_000)
        }
        try read(late)
        let kept = storage.state.withLock { state in state.cache.count }
        #expect(kept >= 30, "the zone read lately keeps \(kept) of its 40 records")
        #expect(reader.cacheBudget.inUse <= reader.cacheBudget.limit)
        #expect(reader.cacheBudget.inUse == Self.held(reader, db, zones: zones), "every byte taken is a cached record's")
    }

    /// Zones asked for room: only when one wanted it, at most every 50 ms, the next 256 in
    /// turn, never the zone that asked, and no zone let go.
    @Test func anAskReachesTheNextZonesInTurn() {
        let budget = RecordCacheBudget(limit: 1)
        var zones = (0..<600).map { _ in AskedZone() }
        let asker = AskedZone()
        for z in zones + [asker] { budget.register(z) }
        budget.relieve(except: asker)
        #expect(zones.allSatisfy { $0.asks == 0 }, "no zone wanted room")
        for _ in 0..<3 {
            budget.want()
            usleep(60_000)
            budget.relieve(except: asker)
            budget.want()
            budget.relieve(except: asker)
        }
        let asks = zones.map(\.asks)
        #expect(asker.asks == 0)
        #expect(asks.allSatisfy { $0 == 1 || $0 == 2 }, "\(asks)")
        #expect((766...767).contains(asks.reduce(0, +)), "three asks of 256, one of them maybe the asker's turn")
        // Zones let go leave the turn: an ask that finds them drops them, and within two
        // asks each of the 100 zones left is asked once.
        zones = Array(zones.suffix(100))
        let before = zones.map(\.asks)
        for _ in 0..<2 {
            budget.want()
            usleep(60_000)
            budget.relieve(except: asker)
        }
        #expect(zip(zones, before).allSatisfy { $0.asks == $1 + 1 }, "\(zip(zones, before).map { $0.asks - $1 })")
    }

    /// A zone that counts how often it was asked for room. `@unchecked Sendable`: `count` is
    /// only touched under `lock`.
    final class AskedZone: RecordCacheHolder, @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func shedIfIdle() { lock.withLock { count += 1 } }
        var asks: Int { lock.withLock { count } }
    }

    @Test func theBudgetTakesOnlyWhatFits() {
        let budget = RecordCacheBudget(limit: 1_000)
        #expect(budget.take(600))
        #expect(!budget.take(500))
        #expect(budget.take(400))
        #expect(!budget.take(1))
        budget.give(1_000)
        #expect(budget.inUse == 0)
        #expect(RecordCacheBudget(limit: .max).take(.max / 2))
        #expect(ZoneReading.inMemory.cacheBytes == .max)
        #expect(ZoneReading.server.cacheBytes == 128 << 20)
        #expect(ZoneReading.indexed.cacheBytes == 32 << 20)
    }
}
