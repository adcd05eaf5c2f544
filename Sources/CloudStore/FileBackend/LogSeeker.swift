import Foundation

/// Finds one entry of a log by its sequence number, where the entries after a number start,
/// or where compaction cuts the log, reading a few small pieces of the file instead of the
/// whole log.
///
/// Sequence numbers grow along the log (commits append in order; compaction keeps a suffix;
/// recovery appends the journal's entries after the last one), so the entry is found by
/// bisecting the file's bytes (a change page reads the log's end back first,
/// ``searchTail(after:)``): a probe reads from a byte to the end of the line it falls in and
/// takes the line's number from its tail, where the writer puts it (a body's keys are sorted:
/// `…,"saved":[…],"seq":N,"time":…,"usage":…,"user":"…"}`, and nothing after `seq` can hold
/// those bytes, since a JSON string escapes its quotes). Only the entry found is parsed, and
/// its checksum and number checked. A line without a newline yet (an append in progress) is not
/// an entry.
struct LogSeeker {
    let fd: Int32
    let path: String
    /// The bytes of the file taken as the log: appends after it are not looked at.
    let size: Int64
    /// Told the size of every read.
    let noteRead: (Int) -> Void
    /// The last piece read, to serve the tail of a line a probe has just read up to.
    private var piece: (start: Int64, bytes: [UInt8]) = (0, [])

    init(fd: Int32, path: String, size: Int64, noteRead: @escaping (Int) -> Void) {
        self.fd = fd
        self.path = path
        self.size = size
        self.noteRead = noteRead
    }

    private static let seqKey = Array(#""seq":"#.utf8)

    /// The entry numbered `seq`, or nil when no whole entry of the log has that number.
    mutating func entry(seq: Int64, zoneID: ZoneID) throws(CKError) -> LogEntry? {
        guard let line = try line(of: seq) else { return nil }
        guard let entry = try? LogEntry.unframe(line[...], zoneID: zoneID), entry.seq == seq else { return nil }
        return entry
    }

    /// The stamp of the entry numbered `seq` (its time and device), read without parsing its
    /// records where its keys are where the writer puts them; nil when no whole entry of the
    /// log has that number.
    ///
    /// The log's last entry is looked at first, read back from the end: the entry asked for is
    /// most often the one an index was brought up to, the last, and a line is much less to read
    /// than a bisection's probes when entries are large.
    mutating func stamp(seq: Int64, zoneID: ZoneID) throws(CKError) -> LogEntry.Stamp? {
        if let last = try lastLine(), let stamp = Self.stamp(of: last, zoneID: zoneID), stamp.seq == seq { return stamp }
        guard let line = try line(of: seq), let stamp = Self.stamp(of: line, zoneID: zoneID), stamp.seq == seq else { return nil }
        return stamp
    }

    private static func stamp(of line: [UInt8], zoneID: ZoneID) -> LogEntry.Stamp? {
        LogEntry.stamp(line[...])
            ?? (try? LogEntry.unframe(line[...], zoneID: zoneID)).map { LogEntry.Stamp(seq: $0.seq, time: $0.time, deviceID: $0.deviceID, checksum: $0.checksum) }
    }

    /// How much of the log's end ``lastTailStamp()`` reads: an entry's number, time, usage,
    /// user and checksum come after its records.
    static let tailStampBytes: Int64 = 4 << 10

    /// The tail stamp of the log's last line (``LogEntry/tailStamp(_:)``) from its last
    /// ``tailStampBytes``, however large the entry; nil when the log is empty, does not end
    /// with a newline (an append in progress), or its last bytes are not an entry's.
    mutating func lastTailStamp() throws(CKError) -> LogEntry.TailStamp? {
        guard size > 0 else { return nil }
        let bytes = try read(max(0, size - Self.tailStampBytes)..<size)
        guard bytes.last == 0x0A else { return nil }
        let line = bytes.dropLast()
        return LogEntry.tailStamp(line[(line.lastIndex(ofByte: 0x0A).map { $0 + 1 } ?? line.startIndex)...])
    }

    /// The log's last line (without its newline), read back from the end in growing pieces,
    /// each searched once and copied once; nil when the log is empty or does not end with a
    /// newline (an append in progress).
    private mutating func lastLine() throws(CKError) -> [UInt8]? {
        var pieces: [[UInt8]] = []   // the newest first
        var start = size
        var chunk: Int64 = 4 << 10
        while start > 0 {
            let from = max(0, start - chunk)
            let bytes = try read(from..<start)
            if pieces.isEmpty && bytes.last != 0x0A { return nil }
            let searched = pieces.isEmpty ? bytes.dropLast() : bytes[...]
            let lineStart = searched.lastIndex(ofByte: 0x0A).map { $0 + 1 }
            pieces.append(Array(searched[(lineStart ?? searched.startIndex)...]))
            if lineStart != nil || from == 0 {
                var line: [UInt8] = []
                line.reserveCapacity(pieces.reduce(0) { $0 + $1.count })
                for piece in pieces.reversed() { line.append(contentsOf: piece) }
                return line
            }
            start = from
            chunk = min(chunk * 2, 1 << 20)
        }
        return nil
    }

    /// The whole line (without its newline) where an entry numbered `seq` would be: the first
    /// after those numbered below it; nil when there is none. Its number is the caller's to check.
    private mutating func line(of seq: Int64) throws(CKError) -> [UInt8]? {
        guard let start = try bisect(after: seq - 1, below: size), let newline = try firstNewline(from: start, below: size) else { return nil }
        return try read(start..<newline)
    }

    /// Where the first entry numbered above `seq` starts (`size` when there is none), found by
    /// bisection (for an entry that may be anywhere: a checkpoint's, recovery's first); nil
    /// when a line read is not an entry (a damaged log), which only a whole read can tell apart.
    mutating func start(ofFirstEntryAfter seq: Int64) throws(CKError) -> Int64? {
        try bisect(after: seq, below: size)
    }

    /// Where a page of the entries after `seq` starts (the first entry numbered above `seq`,
    /// looked for at the log's end first: ``searchTail(after:)``); nil when a line read is not
    /// an entry; throws `changeTokenExpired` when the log no longer reaches back to `seq`: its
    /// first entry is numbered above `seq + 1` (compaction took the ones between), or it has
    /// none and `committed`, the last number committed, is past `seq`. The first entry's number
    /// is read only when the page starts there: an entry before the page is numbered `seq` or
    /// less.
    mutating func pageStart(after seq: Int64, committed: Int64) throws(CKError) -> Int64? {
        guard let tail = try searchTail(after: seq) else { return nil }
        var found = tail.found
        if found == nil { found = try bisect(after: seq, below: tail.bound) }
        guard let offset = found else { return nil }
        guard offset == 0 else { return offset }
        if let newline = try firstNewline(from: 0, below: size) {
            guard let first = try seqOfLine(endingAt: newline, notBefore: 0) else { return nil }
            if seq < first - 1 { throw CKError(.changeTokenExpired, "the log no longer reaches back to \(seq)") }
        } else if seq < committed {
            throw CKError(.changeTokenExpired, "the log no longer reaches back to \(seq)")
        }
        return offset
    }

    /// Where compaction cuts the log: the start of the oldest of the newest entries that fit in
    /// `keep` bytes, or of the last entry when it alone is larger. Reads from the first newline
    /// at or after `size - keep - 1` (which ends the entry before the kept ones), not the log.
    mutating func compactionCut(keeping keep: Int64) throws(CKError) -> Int64 {
        guard size > keep else { return 0 }
        if let newline = try firstNewline(from: size - keep - 1, below: size - 1) { return newline + 1 }
        // No entry starts there: the last entry alone is larger than `keep`, and is kept.
        return try lastNewline(below: size - 1).map { $0 + 1 } ?? 0
    }

    /// Where the first entry numbered above `seq` starts, among the entries whose newline is
    /// before `bound` (the entries from there on are numbered above `seq`; `size` when nothing
    /// is known); nil when a probe lands on a line that is no entry.
    private mutating func bisect(after seq: Int64, below bound: Int64) throws(CKError) -> Int64? {
        // `lo` is where an entry starts, and the entries before it have numbers up to `seq`; the
        // entries whose newline is at `hi` or after have larger ones.
        var lo: Int64 = 0
        var hi = bound
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            guard let newline = try firstNewline(from: mid, below: hi) else {
                hi = mid
                continue
            }
            guard let found = try seqOfLine(endingAt: newline, notBefore: lo) else { return nil }
            if found <= seq { lo = newline + 1 } else { hi = mid }
        }
        return lo
    }

    /// The most of the log's end ``searchTail(after:)`` reads.
    static let tailBudget: Int64 = 64 << 10

    /// Where the first entry numbered above `seq` starts, when the log's last ``tailBudget``
    /// bytes show it; else where the oldest whole entry they hold starts (every entry from
    /// there on is numbered above `seq`: a bound for the bisection), or `size`. Nil when a
    /// whole line read is no entry.
    ///
    /// A client's change token is most often of a recent entry, and the entries after it are
    /// what its page reads anyway: read back from the end, a line's number is in its tail, so
    /// the search stops at the first line from the end numbered `seq` or less, however large
    /// that entry is, where a bisection's probes each read the rest of a line (a batch's entry
    /// is hundreds of KB).
    private mutating func searchTail(after seq: Int64) throws(CKError) -> (found: Int64?, bound: Int64)? {
        var bytes: [UInt8] = []
        var from = size
        var chunk: Int64 = 16 << 10
        var bound = size
        // Where the lines yet to look at end (exclusive, in `bytes`): the last newline, as
        // the bytes after it are an append in progress.
        var end: Int?
        while from > 0, size - from < Self.tailBudget {
            let start = max(0, from - min(chunk, Self.tailBudget - (size - from)))
            bytes = try read(start..<from) + bytes
            end = end.map { $0 + Int(from - start) }
            from = start
            chunk *= 2
            if end == nil {
                guard let last = bytes.lastIndex(ofByte: 0x0A) else { continue }
                end = last
            }
            while let e = end {
                let previous = bytes[..<e].lastIndex(ofByte: 0x0A)
                let lineStart = previous.map { $0 + 1 } ?? 0
                let whole = previous != nil || from == 0
                let line = bytes[lineStart..<e]
                guard let key = line.lastIndex(ofBytes: Self.seqKey), let number = line.decimalInteger(at: key + Self.seqKey.count)?.value else {
                    if whole { return nil }
                    break   // the line's number is before the bytes read
                }
                if number <= seq { return (from + Int64(e) + 1, bound) }
                guard whole else { break }   // numbered above `seq`, its start not read yet
                bound = from + Int64(lineStart)
                if previous == nil { return (0, bound) }   // the log's first entry
                end = previous
            }
        }
        return (nil, bound)
    }

    /// The offset of the first newline in `from..<below`.
    private mutating func firstNewline(from: Int64, below: Int64) throws(CKError) -> Int64? {
        var at = from
        var chunk: Int64 = 512
        while at < below {
            let end = min(below, at + chunk)
            let bytes = try read(at..<end)
            if let i = bytes.firstIndex(ofByte: 0x0A) { return at + Int64(i) }
            at = end
            chunk = min(chunk * 2, 1 << 20)
        }
        return nil
    }

    /// The offset of the last newline before `below`.
    private mutating func lastNewline(below: Int64) throws(CKError) -> Int64? {
        var end = below
        var chunk: Int64 = 512
        while end > 0 {
            let from = max(0, end - chunk)
            if let i = try read(from..<end).lastIndex(ofByte: 0x0A) { return from + Int64(i) }
            end = from
            chunk = min(chunk * 2, 1 << 20)
        }
        return nil
    }

    /// The number in the tail of the line that ends at `newline` and starts at `notBefore` or
    /// after; nil when the line has no number where an entry has it (it is no entry).
    private mutating func seqOfLine(endingAt newline: Int64, notBefore floor: Int64) throws(CKError) -> Int64? {
        var window: Int64 = 256
        while true {
            let from = max(floor, newline - window)
            let bytes = try read(from..<newline)
            // Whether the bytes read reach the line's start.
            var wholeLine = from == floor
            var lineBytes = bytes[...]
            if let nl = bytes.lastIndex(ofByte: 0x0A) {
                wholeLine = true
                lineBytes = bytes[(nl + 1)...]
            }
            if let key = lineBytes.lastIndex(ofBytes: Self.seqKey) {
                return lineBytes.decimalInteger(at: key + Self.seqKey.count)?.value
            }
            if wholeLine { return nil }
            window *= 2
        }
    }

    /// The bytes of `range`, from the last piece read when it holds them.
    private mutating func read(_ range: Range<Int64>) throws(CKError) -> [UInt8] {
        let have = piece.start..<(piece.start + Int64(piece.bytes.count))
        if range.lowerBound >= have.lowerBound, range.upperBound <= have.upperBound {
            return Array(piece.bytes[Int(range.lowerBound - piece.start)..<Int(range.upperBound - piece.start)])
        }
        let bytes = try Syscall.pread(fd, count: Int(range.count), offset: range.lowerBound, path: path).orThrow(.internalError, "cannot read \(path)")
        noteRead(bytes.count)
        guard bytes.count == range.count else {
            throw CKError(.internalError, "\(path) ended at byte \(range.lowerBound + Int64(bytes.count)) while reading up to \(range.upperBound); run `ckfs fsck`")
        }
        piece = (range.lowerBound, bytes)
        return bytes
    }
}
