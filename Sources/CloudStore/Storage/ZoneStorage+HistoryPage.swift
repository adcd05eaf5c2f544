import Foundation

extension ZoneStorage {
    /// A stretch of the zone's history, read from the log without reading the rest of it.
    struct HistoryPage {
        /// The whole entries after the number asked for, in order.
        var entries: [LogEntry]
        /// Whole entries follow the last one given.
        var moreComing: Bool
        /// The client change token of the last entry, up to the page's last, that gave one.
        var clientChangeToken: Data?
    }

    /// The entries after `seq`, whole, until they hold `limit` record changes (nil: to the
    /// end), with the client change token as of the last; nil when the log no longer reaches
    /// back to `seq` (compacted away: the token expired).
    ///
    /// The first entry after `seq` is found by bisecting the log (``LogSeeker``) and the page
    /// read forward from there, so the cost grows with the page, not the history. Like
    /// ``loggedEntry(seq:)`` it takes no lock: the log only grows at its end and compaction
    /// replaces it whole. A log whose bisection meets a line that is no entry is read whole,
    /// as ``history()`` reads it.
    func history(after seq: Int64, changeLimit limit: Int?) throws(CKError) -> HistoryPage? {
        try recoverAfterRestartIfNeeded()
        let fd: Int32
        switch Syscall.open(logPath, O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == ENOENT: return try wholeHistoryPage(after: seq, changeLimit: limit)
        case .failure(let e): throw CKError(.internalError, "cannot open \(logPath)", cause: .system(e))
        }
        defer { Syscall.close(fd) }
        let checkpoint = try checkpointHoldingTokens(upTo: seq)
        let size = try Syscall.fstat(fd, path: logPath).orThrow(.internalError, "cannot stat \(logPath)").size
        var seeker = LogSeeker(fd: fd, path: logPath, size: size) { [self] n in noteLogRead(n) }
        guard let (offset, firstSeq) = try seeker.start(ofFirstEntryAfter: seq) else {
            return try wholeHistoryPage(after: seq, changeLimit: limit)
        }
        if let firstSeq {
            guard seq >= firstSeq - 1 else { return nil }
        } else if seq < (try peekMarker()?.seq ?? 0) {
            return nil
        }
        var reader = LogLines(fd: fd, path: logPath, from: offset, size: size) { [self] n in noteLogRead(n) }
        var page = HistoryPage(entries: [], moreComing: false, clientChangeToken: nil)
        var changes = 0
        while let (line, lineStart) = try reader.next() {
            if let limit, changes >= limit {
                page.moreComing = true
                break
            }
            let entry: LogEntry
            do { entry = try LogEntry.unframe(line[...], zoneID: zoneID) } catch {
                throw CKError(.internalError, "the log \(logPath) has a damaged entry at byte \(lineStart) (\(error)); run `ckfs fsck`")
            }
            changes += entry.saved.count + entry.deleted.count
            if let token = entry.clientChangeToken { page.clientChangeToken = token }
            page.entries.append(entry)
        }
        if page.clientChangeToken == nil {
            let floor = try checkpoint.flatMap { (c) throws(CKError) in try seeker.start(ofFirstEntryAfter: c)?.offset } ?? 0
            page.clientChangeToken = try lastClientChangeToken(fd: fd, before: offset, notBefore: floor)
        }
        return page
    }

    /// The client change token of the last entry up to `seq` that gave one, read as
    /// ``history(after:changeLimit:)`` reads it.
    func clientChangeToken(upTo seq: Int64) throws(CKError) -> Data? {
        try recoverAfterRestartIfNeeded()
        let fd: Int32
        switch Syscall.open(logPath, O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == ENOENT: return nil
        case .failure(let e): throw CKError(.internalError, "cannot open \(logPath)", cause: .system(e))
        }
        defer { Syscall.close(fd) }
        let size = try Syscall.fstat(fd, path: logPath).orThrow(.internalError, "cannot stat \(logPath)").size
        var seeker = LogSeeker(fd: fd, path: logPath, size: size) { [self] n in noteLogRead(n) }
        let checkpoint = try checkpointHoldingTokens(upTo: seq)
        guard let (offset, _) = try seeker.start(ofFirstEntryAfter: seq) else { return try history().clientChangeToken(upTo: seq) }
        let floor = try checkpoint.flatMap { (c) throws(CKError) in try seeker.start(ofFirstEntryAfter: c)?.offset } ?? 0
        return try lastClientChangeToken(fd: fd, before: offset, notBefore: floor)
    }

    /// The checkpoint whose `zone.json` holds the last client change token up to `seq`'s: a
    /// checkpoint notes the last token of the entries up to it, so a search back from `seq`
    /// stops there. Nil when the checkpoint is past `seq` (its token may be a later one) and
    /// the search goes back through the whole log.
    private func checkpointHoldingTokens(upTo seq: Int64) throws(CKError) -> Int64? {
        let checkpoint = try readMeta().checkpointSeq
        return checkpoint <= seq ? checkpoint : nil
    }

    /// The client change token of the last entry between `floor` and `offset` (both where
    /// entries start) that gave one, reading the log backwards and parsing only the lines that
    /// start as an entry with a token does (``LogScanner``).
    func lastClientChangeToken(fd: Int32, before offset: Int64, notBefore floor: Int64) throws(CKError) -> Data? {
        var end = offset
        // Small first (the token or the checkpoint is often a few entries back), then larger.
        var chunk: Int64 = 4 << 10
        while end > floor {
            let from = max(floor, end - chunk)
            let bytes = try Syscall.pread(fd, count: Int(end - from), offset: from, path: logPath).orThrow(.internalError, "cannot read \(logPath)")
            noteLogRead(bytes.count)
            // Lines that start in this piece: after its first newline, or at the file's start.
            let firstLine = from == floor ? 0 : (bytes.firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.count)
            if firstLine == bytes.count, from > floor {
                chunk *= 2
                continue
            }
            var lineEnd = bytes.count
            while lineEnd > firstLine {
                let lineStart = bytes[firstLine..<(lineEnd - 1)].lastIndex(of: 0x0A).map { $0 + 1 } ?? firstLine
                let line = bytes[lineStart..<(lineEnd - 1)]
                if line.starts(with: LogScanner.tokenLinePrefix), let token = (try? LogEntry.unframe(line, zoneID: zoneID))?.clientChangeToken {
                    return token
                }
                lineEnd = lineStart
            }
            end = from + Int64(firstLine)
            chunk = min(chunk * 2, 1 << 20)
        }
        return nil
    }

    /// The page from the whole log, for a log the bisection cannot walk.
    private func wholeHistoryPage(after seq: Int64, changeLimit limit: Int?) throws(CKError) -> HistoryPage? {
        let history = try history()
        guard let all = history.entries(after: seq) else { return nil }
        var page = HistoryPage(entries: [], moreComing: false, clientChangeToken: nil)
        var changes = 0
        for entry in all {
            if let limit, changes >= limit {
                page.moreComing = true
                break
            }
            changes += entry.saved.count + entry.deleted.count
            page.entries.append(entry)
        }
        page.clientChangeToken = history.clientChangeToken(upTo: page.entries.last?.seq ?? seq)
        return page
    }
}

/// The whole lines of a file from an offset on, read in pieces; a last line without its
/// newline (an append in progress) is not given.
struct LogLines {
    let fd: Int32
    let path: String
    let size: Int64
    let noteRead: (Int) -> Void
    /// Bytes read and not yet given, and the file offset of the first of them.
    private var buffer: [UInt8] = []
    private var bufferStart: Int64
    private var position = 0

    init(fd: Int32, path: String, from offset: Int64, size: Int64, noteRead: @escaping (Int) -> Void) {
        self.fd = fd
        self.path = path
        self.size = size
        self.noteRead = noteRead
        bufferStart = offset
    }

    /// The next line without its newline, and where it starts.
    mutating func next() throws(CKError) -> (line: [UInt8], start: Int64)? {
        while true {
            if let nl = buffer[position...].firstIndex(of: 0x0A) {
                let line = Array(buffer[position..<nl])
                let start = bufferStart + Int64(position)
                position = nl + 1
                return (line, start)
            }
            let readFrom = bufferStart + Int64(buffer.count)
            guard readFrom < size else { return nil }
            // Keep the unfinished line, drop what was given, and read the next piece.
            buffer.removeFirst(position)
            bufferStart += Int64(position)
            position = 0
            let count = Int(min(size - readFrom, 256 << 10))
            let bytes = try Syscall.pread(fd, count: count, offset: readFrom, path: path).orThrow(.internalError, "cannot read \(path)")
            noteRead(bytes.count)
            guard !bytes.isEmpty else { return nil }
            buffer += bytes
        }
    }
}
