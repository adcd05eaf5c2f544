import Foundation

extension ZoneFolder {
    /// The entries after `seq`, whole, until they hold `limit` record changes (nil: to the
    /// end), with the client change token as of the last (unless `withClientChangeToken` is
    /// false: the index's catch-up, which the token's lookup may itself start); nil when the
    /// log no longer reaches back to `seq` (compacted away: the token expired). `meta` is
    /// `zone.json` as the caller read it, before this reads the log.
    ///
    /// The first entry after `seq` is found from the log's end or by bisecting it
    /// (``LogSeeker``) and the page read forward from there, up to the last entry committed
    /// when the read began (the commit marker's), so the cost grows with the page, not the
    /// history. Like ``loggedEntry(seq:)`` it takes no lock: the log only grows at its end and
    /// compaction replaces it whole. When anything is not as a whole log would be (a probe on a
    /// line that is no entry, a tail cut by another process's recovery meanwhile), the log is
    /// read whole, as ``history()`` reads it.
    func history(after seq: Int64, changeLimit limit: Int?, meta: ZoneMeta, withClientChangeToken: Bool) throws(CKError) -> HistoryPage? {
        try recoverAfterRestartIfNeeded()
        do throws(CKError) {
            if let page = try pagedHistory(after: seq, changeLimit: limit, meta: meta, withClientChangeToken: withClientChangeToken) { return page }
        } catch where error.code == .changeTokenExpired {
            return nil
        } catch {}
        return try wholeHistoryPage(after: seq, changeLimit: limit, meta: meta)
    }

    /// ``history(after:changeLimit:meta:withClientChangeToken:)`` by bisection; nil when the log must be read whole,
    /// `changeTokenExpired` when it no longer reaches back to `seq`.
    private func pagedHistory(after seq: Int64, changeLimit limit: Int?, meta: ZoneMeta, withClientChangeToken: Bool) throws(CKError) -> HistoryPage? {
        // The commit marker is read before the log's size, as `meta` is: what they say is then
        // true of every byte read. A busy marker (an append in progress, or a writer that died
        // in one) may be behind the log's last whole entry, which other readers already show:
        // the whole read gives that entry too.
        guard let marker = try peekMarker(), !marker.busy else { return nil }
        let committed = marker.seq
        return try withLogSeeker { (seeker) throws(CKError) -> HistoryPage? in
            guard let offset = try seeker.pageStart(after: seq, committed: committed) else { return nil }
            var reader = LogLines(fd: seeker.fd, path: logPath, from: offset, size: seeker.size) { [self] n in noteLogRead(n) }
            var page = HistoryPage(entries: [], moreComing: false, clientChangeToken: nil)
            var changes = 0
            while page.entries.last.map({ $0.seq < committed }) ?? (seq < committed), let (line, _) = try reader.next() {
                if let limit, changes >= limit {
                    page.moreComing = true
                    break
                }
                guard let entry = try? LogEntry.unframe(line[...], zoneID: zoneID), entry.seq == (page.entries.last?.seq ?? seq) + 1 else { return nil }
                changes += entry.saved.count + entry.deleted.count
                if let token = entry.clientChangeToken { page.clientChangeToken = token }
                page.entries.append(entry)
            }
            if page.clientChangeToken == nil && withClientChangeToken {
                page.clientChangeToken = try tokenBefore(offset, upTo: seq, meta: meta, seeker: &seeker)
            }
            return page
        } ?? nil
    }

    /// The client change token of the last entry up to `seq` that gave one (`zone.json`'s when
    /// the log holds none), read as ``history(after:changeLimit:meta:withClientChangeToken:)`` reads it.
    func clientChangeToken(upTo seq: Int64, meta: ZoneMeta) throws(CKError) -> Data? {
        try recoverAfterRestartIfNeeded()
        // The index's tokens first: the log's search starts with a bisection, which reads a
        // probe's line at each step.
        if let indexed = indexedClientChangeToken(upTo: seq) { return indexed ?? meta.clientChangeToken }
        do throws(CKError) {
            let found = try withLogSeeker { (seeker) throws(CKError) -> Data?? in
                guard let offset = try seeker.start(ofFirstEntryAfter: seq) else { return nil }
                return .some(try tokenBefore(offset, upTo: seq, meta: meta, seeker: &seeker))
            }
            switch found {
            case nil: return meta.clientChangeToken          // no log file
            case .some(.some(let token)): return token
            case .some(nil): break                           // a probe met a line that is no entry
            }
        } catch {}
        return try history().clientChangeToken(upTo: seq) ?? meta.clientChangeToken
    }

    /// The token of the last entry before `offset` (where the first entry after `seq` starts)
    /// that gave one. A checkpoint at or before `seq` notes in `zone.json` the last token up to
    /// it, so the search back stops at the checkpoint's entry and takes `meta`'s token there;
    /// past `seq`, it goes back through the whole log, and `meta`'s is the answer only for a
    /// log that holds none.
    private func tokenBefore(_ offset: Int64, upTo seq: Int64, meta: ZoneMeta, seeker: inout LogSeeker) throws(CKError) -> Data? {
        if let indexed = indexedClientChangeToken(upTo: seq) { return indexed ?? meta.clientChangeToken }
        var floor: Int64 = 0
        if meta.checkpointSeq <= seq, let start = try seeker.start(ofFirstEntryAfter: meta.checkpointSeq) { floor = start }
        return try lastClientChangeToken(fd: seeker.fd, before: offset, notBefore: floor) ?? meta.clientChangeToken
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
            let firstLine = from == floor ? 0 : (bytes.firstIndex(ofByte: 0x0A).map { $0 + 1 } ?? bytes.count)
            if firstLine == bytes.count, from > floor {
                chunk *= 2
                continue
            }
            var lineEnd = bytes.count
            while lineEnd > firstLine {
                let lineStart = bytes[firstLine..<(lineEnd - 1)].lastIndex(ofByte: 0x0A).map { $0 + 1 } ?? firstLine
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
    private func wholeHistoryPage(after seq: Int64, changeLimit limit: Int?, meta: ZoneMeta) throws(CKError) -> HistoryPage? {
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
        page.clientChangeToken = history.clientChangeToken(upTo: page.entries.last?.seq ?? seq) ?? meta.clientChangeToken
        return page
    }
}
