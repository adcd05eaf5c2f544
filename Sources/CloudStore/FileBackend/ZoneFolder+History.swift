import Foundation

// Reading the log's history: whole, or one entry found by bisecting the log.
extension ZoneFolder {
    /// The history the log keeps: its entries in order, and the oldest sequence number a
    /// change token may name (the one before the first kept entry).
    struct History {
        var entries: [LogEntry]
        var start: Int64

        /// Entries after `seq`; nil when the log no longer reaches back that far.
        func entries(after seq: Int64) -> [LogEntry]? {
            seq >= start ? entries.filter { $0.seq > seq } : nil
        }

        /// The client change token of the last entry up to `seq` that gave one.
        func clientChangeToken(upTo seq: Int64) -> Data? {
            entries.last { $0.clientChangeToken != nil && $0.seq <= seq }?.clientChangeToken
        }
    }

    /// Reads and parses the whole log once.
    func history() throws(CKError) -> History {
        try recoverAfterRestartIfNeeded()
        let bytes = try Syscall.readFile(logPath).orThrow(.internalError, "cannot read \(logPath)") ?? []
        noteLogRead(bytes.count)
        let all = LogScanner.scan(bytes, baseOffset: 0, zoneID: zoneID).entries.map(\.0)
        if let first = all.first { return History(entries: all, start: first.seq - 1) }
        return History(entries: [], start: try peekMarker()?.seq ?? 0)
    }

    /// The entry numbered `seq` as the log holds it now; nil when it holds no such entry (never
    /// made, or compacted away). Reads a few pieces of the log (``LogSeeker``), not the history,
    /// and takes no lock: the log only grows at its end, compaction replaces it whole (the
    /// descriptor opened here keeps the file it opened), and recovery cuts only a torn tail,
    /// which holds no committed entry. A writer calls it after releasing the zone (the ancestor
    /// of a refused save), so other saves to the zone never wait for it.
    func loggedEntry(seq: Int64) throws(CKError) -> LogEntry? {
        try withLogSeeker { (seeker) throws(CKError) in try seeker.entry(seq: seq, zoneID: zoneID) } ?? nil
    }

    /// The time and device of entry `seq` as the log holds it now, as ``loggedEntry(seq:)``
    /// reads it but without parsing its records.
    func loggedStamp(seq: Int64) throws(CKError) -> LogEntry.Stamp? {
        try withLogSeeker { (seeker) throws(CKError) in try seeker.stamp(seq: seq, zoneID: zoneID) } ?? nil
    }

    /// Whether the entry an index `state` names is in the log with its time and device (the
    /// state of an empty index names none): the state is of this log, not of another history.
    ///
    /// A state that notes the entry's checksum is first compared with the log's last bytes
    /// (``LogSeeker/lastTailStamp()``): the entry an index is brought up to is most often the
    /// last, and its number, time and checksum are there however large it is (a batch's line
    /// is hundreds of KB). Otherwise the entry is read whole, its time and device compared.
    func isLogged(_ state: ZoneIndexFile.State) throws(CKError) -> Bool {
        if state.applied == 0 { return state.time == 0 && state.device.isEmpty }
        return try withLogSeeker { (seeker) throws(CKError) -> Bool in
            if let checksum = state.checksum,
               try seeker.lastTailStamp() == LogEntry.TailStamp(seq: state.applied, time: state.time, checksum: checksum) {
                return true
            }
            guard let stamp = try seeker.stamp(seq: state.applied, zoneID: zoneID) else { return false }
            return stamp.time == state.time && stamp.deviceID == state.device
        } ?? false
    }

    /// Runs `body` with a ``LogSeeker`` on the log as it is now (its descriptor and size);
    /// nil when the zone has no log file.
    func withLogSeeker<T>(_ body: (inout LogSeeker) throws(CKError) -> T) throws(CKError) -> T? {
        let fd: Int32
        switch Syscall.open(logPath, Posix.O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == Posix.ENOENT: return nil
        case .failure(let e): throw CKError(.internalError, "cannot open \(logPath)", cause: .system(e))
        }
        defer { Syscall.close(fd) }
        let size = try Syscall.fstat(fd, path: logPath).orThrow(.internalError, "cannot stat \(logPath)").size
        var seeker = LogSeeker(fd: fd, path: logPath, size: size) { [self] n in noteLogRead(n) }
        return try body(&seeker)
    }
}
