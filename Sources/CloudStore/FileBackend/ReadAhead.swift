import Foundation

/// Pieces of work read by helper threads a few pieces ahead of the one thread that uses
/// them, in order: a zone's copy reads and parses record files on two threads while the
/// calling thread writes the records it has (``ZoneFolderSnapshot/forEachRecord(_:)``), as
/// `tar c | tar x` reads and writes at once.
///
/// Helper `h` of `n` reads pieces `h`, `h + n`, … and starts piece `k` only when fewer than
/// ``depth`` pieces before it wait to be used, so memory holds at most `depth` pieces, and the
/// piece the user waits for is always being read (a helper never waits on a later piece).
/// The first failure stops its helper; the user gets it when it reaches that piece. The
/// helpers start with the object, and ``forEachPiece(_:)``, called once, is what ends them.
final class ReadAhead<Item: Sendable>: @unchecked Sendable {
    // Sendable by hand: `ready`, `used`, `stopped` and `running` are read and written only
    // with `condition` locked; `makePiece` and the counts are set once, before any helper starts.
    private let condition = NSCondition()
    private var ready: [Int: Result<[Item], CKError>] = [:]
    private var used = 0
    private var stopped = false
    private var running = 0
    private let pieces: Int
    private let depth: Int
    private let makePiece: @Sendable (Int) throws(CKError) -> [Item]

    /// `makePiece(k)` reads piece `k` of `pieces`; `helpers` threads call it, at most `depth`
    /// pieces ahead of the user.
    init(pieces: Int, helpers: Int = 2, depth: Int = 4, makePiece: @escaping @Sendable (Int) throws(CKError) -> [Item]) {
        self.pieces = pieces
        self.depth = max(depth, helpers)
        self.makePiece = makePiece
        running = helpers
        for h in 0..<helpers {
            let thread = Thread { [self] in help(first: h, step: helpers) }
            thread.name = "ckfs.read-ahead"
            // A main thread's stack: the JSON parser recurses once per level of nesting (512 at
            // most), and a damaged export must give an error, not overflow a small stack.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func help(first: Int, step: Int) {
        defer { condition.withLock { running -= 1; condition.broadcast() } }
        for k in stride(from: first, to: pieces, by: step) {
            let go = condition.withLock { () -> Bool in
                while !stopped && k >= used + depth { condition.wait() }
                return !stopped
            }
            guard go else { return }
            let result: Result<[Item], CKError>
            do throws(CKError) { result = .success(try makePiece(k)) } catch { result = .failure(error) }
            condition.withLock {
                ready[k] = result
                condition.broadcast()
            }
            if case .failure = result { return }
        }
    }

    /// Calls `body` with every piece in order, then stops the helpers and waits for them to
    /// end, also when `body` or a read throws: nothing reads after this returns.
    func forEachPiece(_ body: ([Item]) throws(CKError) -> Void) throws(CKError) {
        defer {
            condition.withLock {
                stopped = true
                condition.broadcast()
                while running > 0 { condition.wait() }
            }
        }
        for k in 0..<pieces {
            let piece = condition.withLock { () -> Result<[Item], CKError> in
                while ready[k] == nil { condition.wait() }
                return ready.removeValue(forKey: k)!
            }
            try body(try piece.get())
            condition.withLock {
                used = k + 1
                condition.broadcast()
            }
        }
    }
}
