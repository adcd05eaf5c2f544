import Testing
import TestSupport
@testable import CloudStore

/// A zone's cache of parsed records, when full: the records read again stay, the ones put in
/// and not read again go first, and the bytes it holds are what it took from the budget.
@Suite struct RecordCacheTests {
    /// A working set read over and over, with a stream of records read once between the
    /// rounds (a writer's new records, a listing): once the cache is full, every read of the
    /// working set is a hit. Letting records go in no useful order would lose some of the
    /// working set to each insert.
    @Test func aFullCacheKeepsTheRecordsReadAgain() {
        var cache = RecordCache(budget: RecordCacheBudget(limit: .max), limit: 100)
        let working = (0..<50).map { record("w\($0)") }
        var streamed = 0
        var hitsInLastRounds = 0
        for round in 0..<40 {
            for r in working {
                if cache.lookup(r.recordID.recordName) != nil {
                    if round >= 20 { hitsInLastRounds += 1 }
                } else {
                    cache.insert(r)
                }
            }
            for _ in 0..<30 {
                cache.insert(record("once\(streamed)"))
                streamed += 1
            }
            #expect(cache.count <= 100)
        }
        #expect(cache.count == 100, "the cache is kept full")
        #expect(hitsInLastRounds == 20 * working.count, "every read of the working set hits once the cache is full")
    }

    /// A cache whose records mostly went keeps no room sized for what it once held; what it
    /// still holds is found, and the records read stay when it is full again.
    @Test func aCacheThatLostItsRecordsGivesBackItsRoom() {
        let budget = RecordCacheBudget(limit: .max)
        var cache = RecordCache(budget: budget, limit: 10_000)
        for i in 0..<1_000 { cache.insert(record("r\(i)")) }
        #expect(cache.slotCount == 1_000)
        for i in 0..<990 { cache.remove("r\(i)") }
        #expect(cache.count == 10)
        #expect(cache.slotCount <= 64, "\(cache.slotCount) slots for 10 records")
        for i in 990..<1_000 { #expect(cache.lookup("r\(i)") != nil) }
        #expect(budget.inUse == cache.bytes)
        for i in 990..<1_000 { cache.remove("r\(i)") }
        #expect(cache.slotCount == 0)
        #expect(budget.inUse == 0)

        // Records read, then most of the others gone (the ring is made again on the way):
        // once full again, the records put in go before the ones read, as before.
        var full = RecordCache(budget: budget, limit: 100)
        for i in 0..<100 { full.insert(record("k\(i)")) }
        for i in 0..<10 { _ = full.lookup("k\(i)") }
        for i in 10..<90 { full.remove("k\(i)") }
        #expect(full.slotCount < 100, "the ring was made again")
        for i in 0..<90 { full.insert(record("new\(i)")) }
        #expect(full.count == 100)
        #expect((0..<10).allSatisfy { full.contains("k\($0)") }, "the records read stay")
        #expect(!(90..<100).allSatisfy { full.contains("k\($0)") }, "records put in and not read went")
    }

    /// A record saved again keeps its place and its mark; one removed gives its bytes back;
    /// what the caches hold is what they took from the budget they share.
    @Test func theBytesHeldAreTheBytesTaken() {
        let unit = RecordCacheBudget.cost(of: record("r00"))
        let budget = RecordCacheBudget(limit: 40 * unit)
        var a = RecordCache(budget: budget, limit: 1_000)
        var b = RecordCache(budget: budget, limit: 1_000)
        for i in 10..<40 { a.insert(record("r\(i)")) }
        #expect(a.count == 30)
        a.insert(record("r10", ["x": .int64(1)]))
        #expect(a.lookup("r10")?["x"] == .int64(1), "a record saved again is the new version")
        #expect(a.count == 30)
        for i in 10..<30 { b.insert(record("b\(i)")) }
        // b lets go of its own records to make room, never a's.
        #expect(a.count == 30)
        #expect(b.count == (budget.limit - a.bytes) / unit)
        #expect(b.count > 0)
        #expect(budget.inUse == a.bytes + b.bytes)
        #expect(budget.inUse <= budget.limit)

        for i in 10..<20 { a.remove("r\(i)") }
        #expect(a.count == 20)
        #expect(budget.inUse == a.bytes + b.bytes)
        b.removeAll()
        #expect(b.isEmpty)
        #expect(budget.inUse == a.bytes)
        a.removeAll()
        #expect(budget.inUse == 0)

        // With the budget held by another cache and none of its own, a record is not kept.
        var c = RecordCache(budget: budget, limit: 1_000)
        for i in 0..<40 { a.insert(record("r\(i)")) }
        c.insert(record("lone"))
        #expect(c.isEmpty)
        #expect(budget.inUse == a.bytes)
    }
}
