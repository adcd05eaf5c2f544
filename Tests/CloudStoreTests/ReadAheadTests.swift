import Foundation
import Synchronization
import Testing
@testable import CloudStore

/// The helper threads a zone's copy reads with: pieces come in order, no more are read ahead
/// than allowed, a failure comes at its piece, and a user that stops early leaves no helper
/// running.
@Suite struct ReadAheadTests {
    /// Pieces read by two helpers at different speeds come to the user in order, each once.
    @Test func piecesComeInOrderFromTwoHelpers() throws {
        let ahead = ReadAhead<Int>(pieces: 200, helpers: 2, depth: 3) { (k) throws(CKError) -> [Int] in
            // The odd pieces' helper is slower, so the even one is often ahead of it.
            if k % 2 == 1 { usleep(200) }
            return [k * 10, k * 10 + 1]
        }
        var seen: [Int] = []
        try ahead.forEachPiece { (items) throws(CKError) in seen += items }
        var expected: [Int] = []
        for k in 0..<200 { expected += [k * 10, k * 10 + 1] }
        #expect(seen == expected)
    }

    /// A helper starts piece `k` only when fewer than `depth` pieces before it wait: while the
    /// user is slow, no read runs more than `depth` pieces past the last piece used.
    @Test func helpersStayWithinTheirDepth() throws {
        let used = Mutex(0)
        let furthest = Mutex(0)
        let ahead = ReadAhead<Int>(pieces: 60, helpers: 2, depth: 4) { (k) throws(CKError) -> [Int] in
            let lead = k - used.withLock { $0 }
            furthest.withLock { $0 = max($0, lead) }
            return [k]
        }
        try ahead.forEachPiece { (items) throws(CKError) in
            usleep(1_000)
            used.withLock { $0 = items[0] + 1 }
        }
        // Piece k starts once k is less than the pieces used plus 4: at most 3 past them.
        let lead = furthest.withLock { $0 }
        #expect(lead <= 3)
        #expect(lead >= 1, "the helpers never read ahead at all")
    }

    /// A read that fails gives its error when the user reaches that piece, after every piece
    /// before it; nothing after it is given.
    @Test func aFailureComesAtItsPiece() {
        let ahead = ReadAhead<Int>(pieces: 50, helpers: 2, depth: 4) { (k) throws(CKError) -> [Int] in
            if k == 17 { throw CKError(.internalError, "piece 17 is damaged") }
            return [k]
        }
        var seen: [Int] = []
        #expect(throws: CKError.self) {
            try ahead.forEachPiece { (items) throws(CKError) in seen += items }
        }
        #expect(seen == Array(0..<17))
    }

    /// A user that throws stops the helpers and returns once they have ended: no read runs
    /// after `forEachPiece` returns.
    @Test func aUserThatStopsLeavesNoHelperReading() {
        let reading = Mutex(0)
        let afterReturn = Mutex(false)
        let returned = Mutex(false)
        let ahead = ReadAhead<Int>(pieces: 1_000, helpers: 2, depth: 8) { (k) throws(CKError) -> [Int] in
            reading.withLock { $0 += 1 }
            if returned.withLock({ $0 }) { afterReturn.withLock { $0 = true } }
            usleep(100)
            reading.withLock { $0 -= 1 }
            return [k]
        }
        #expect(throws: CKError.self) {
            try ahead.forEachPiece { (items) throws(CKError) in
                if items[0] == 5 { throw CKError(.operationCancelled, "stopped by the user") }
            }
        }
        returned.withLock { $0 = true }
        #expect(reading.withLock { $0 } == 0)
        usleep(20_000)
        #expect(!afterReturn.withLock { $0 })
    }

    /// No pieces, and more helpers than pieces, end at once.
    @Test func noPiecesAndIdleHelpersEnd() throws {
        var count = 0
        try ReadAhead<Int>(pieces: 0, helpers: 2) { (k) throws(CKError) -> [Int] in [k] }.forEachPiece { (_) throws(CKError) in count += 1 }
        try ReadAhead<Int>(pieces: 1, helpers: 3) { (k) throws(CKError) -> [Int] in [k] }.forEachPiece { (_) throws(CKError) in count += 1 }
        #expect(count == 1)
    }
}
