#if canImport(Glibc)
#endif

// The journal: where small commits become durable.
//
// An entry is appended to `log.jsonl` and then has to reach the disk. `fdatasync` of a file
// that grew also writes its inode (the new size) and waits for that write, which makes it
// about half as slow again as a sync of a file written in place. SQLite's WAL gets the cheaper kind by reusing its file after each
// checkpoint. So does this: `journal` is a file of `journalBytes` written once (zeros) and
// never grown; a commit writes its frame (the same bytes as its log line) at the journal's
// next free byte and syncs the journal instead of the log. When the frame does not fit,
// the log itself is synced, which makes everything before it durable, and the journal
// starts again at byte 0.
//
// So the frames from byte 0 on, while each has the sequence number after the one before,
// are the entries since the log's last sync (and some older ones). After a machine crash
// recovery appends those the log lacks to it (ZoneFolder+Recovery.swift). Frames beyond
// that chain are older (sequence numbers only grow) and a torn frame fails its CRC.
//
// Where the next frame goes is known only to the process that wrote the last commit: a
// process writes into the journal only when the zone's last commit is its own (and it knows
// the journal has not restarted since); otherwise it syncs the log. One writer, the common
// case, always takes the journal; writers that take turns sync the log as before.
extension ZoneFolder {
    /// This process's place in the journal (guarded by `writeLock`).
    struct Journal {
        var fd: Int32
        /// The file `fd` is open at: another process may put a new journal in its place.
        var inode: UInt64
        var capacity: Int64
        /// Where the next frame goes, and the file offset of `fd`.
        var position: Int64
        /// `position` holds only while the zone's last commit is this one.
        var afterSeq: Int64
    }

    var journalPath: String { StoreLayout.journalFile(directory) }

    /// Makes an entry that was just written to the log durable (with the writer's lock held):
    /// its frame into the journal and one `fdatasync` of a file that does not grow, or, when
    /// the journal cannot take it, one of the log, after which the journal starts again.
    func makeDurable(_ frame: [UInt8], seq: Int64, logFD: Int32) -> Result<Void, SystemCallError> {
        let size = Int64(frame.count)
        if var j = writerState.journal, j.afterSeq == seq - 1, j.position + size <= j.capacity {
            let result = io.write(j.fd, frame, path: journalPath).flatMap { io.sync(j.fd, path: journalPath, dataOnly: true) }
            guard case .success = result else {
                closeJournal() // where its file offset is, and what reached the disk, is unknown
                return result
            }
            j.position += size
            j.afterSeq = seq
            writerState.journal = j
            return result
        }
        let result = io.sync(logFD, path: logPath, dataOnly: true)
        if case .success = result { restartJournal(afterSeq: seq, frameSize: size) }
        return result
    }

    /// The log is synced up to `seq`: the next frame goes to byte 0. Opens the journal, or
    /// makes it when the zone has none and its entries are small enough to use it (a zone
    /// written only in large batches never gets one). Any failure just leaves the journal out.
    func restartJournal(afterSeq seq: Int64, frameSize: Int64 = 0) {
        if let j = writerState.journal {
            // A journal made again by another process (see ZoneFolder+JournalFile.swift) or
            // set aside by recovery is no longer this one: frames written into it would be lost.
            if case .success(let st?) = Syscall.stat(journalPath), st.inode == j.inode {
                guard case .success = Syscall.seek(j.fd, to: 0, path: journalPath) else { return closeJournal() }
                writerState.journal!.position = 0
                writerState.journal!.afterSeq = seq
                return
            }
            closeJournal()
        }
        let capacity = tuning.journalBytes
        guard capacity > 0, frameSize <= capacity / 4, let opened = openJournalFile(capacity: capacity) else { return }
        guard opened.status.size > 0 else {
            Syscall.close(opened.fd)
            return
        }
        writerState.journal = Journal(fd: opened.fd, inode: opened.status.inode, capacity: min(opened.status.size, capacity), position: 0, afterSeq: seq)
    }

    /// Forgets this process's place in the journal (the zone was deleted or recovered, or a
    /// write failed): the next commit syncs the log.
    func closeJournal() {
        if let journal = writerState.journal { Syscall.close(journal.fd) }
        writerState.journal = nil
    }

    /// The frames at the start of the journal, each with the sequence number after the one
    /// before, with their lines (newline included). Empty when there is no journal.
    func journalFrames() throws(CKError) -> [(entry: LogEntry, line: ArraySlice<UInt8>)] {
        guard let bytes = try Syscall.readFile(journalPath).orThrow(.internalError, "cannot read \(journalPath)") else { return [] }
        var frames: [(entry: LogEntry, line: ArraySlice<UInt8>)] = []
        var start = 0
        while start < bytes.count, bytes[start] == UInt8(ascii: "{"), let nl = bytes[start...].firstIndex(ofByte: 0x0A) {
            guard let entry = try? LogEntry.unframe(bytes[start..<nl], zoneID: zoneID),
                  frames.last.map({ entry.seq == $0.entry.seq + 1 }) ?? true else { break }
            frames.append((entry, bytes[start...nl]))
            start = nl + 1
        }
        return frames
    }

    /// Recovery's part (writer's and apply locks held): appends to the log the journal's
    /// entries after `lastSeq`, the log's last whole entry, and syncs the log. Returns the
    /// entries appended with the log offset after each.
    ///
    /// A crash cannot leave a journal whose entries skip some after the log's end (the
    /// journal starts again only once the log is synced): files copied from a store while it
    /// was written can. Such a journal is not this log's; it is set aside as
    /// `journal.unmatched`, kept for the user, and `note` says so.
    func appendJournalToLog(after lastSeq: Int64, logEnd: Int64, note: inout String?) throws(CKError) -> [(LogEntry, end: Int64)] {
        var missing = try journalFrames().filter { $0.entry.seq > lastSeq }
        if let first = missing.first, first.entry.seq != lastSeq + 1 {
            let aside = journalPath + ".unmatched"
            try io.rename(journalPath, aside).orThrow(.internalError, "cannot set \(journalPath) aside")
            closeJournal()
            note = "the journal's entries \(first.entry.seq)...\(missing.last!.entry.seq) do not follow on from the log's last entry (\(lastSeq)), as when a store is copied while it is written; not applied, kept as \(aside)"
            missing = []
        }
        let lfd = try Syscall.open(logPath, Posix.O_WRONLY | Posix.O_APPEND).orThrow(.internalError, "cannot open \(logPath)")
        defer { Syscall.close(lfd) }
        var appended: [(LogEntry, end: Int64)] = []
        if !missing.isEmpty {
            var bytes: [UInt8] = []
            var end = logEnd
            for frame in missing {
                bytes += frame.line
                end += Int64(frame.line.count)
                appended.append((frame.entry, end))
            }
            try io.write(lfd, bytes, path: logPath).orThrow(.internalError, "cannot append the journal's entries to \(logPath)")
        }
        // Entries of this boot may be only in the page cache until now.
        try io.sync(lfd, path: logPath, dataOnly: true).orThrow(.internalError, "cannot sync \(logPath)")
        return appended
    }

    /// After a restart the log on disk may lack its newest entries, which the journal holds:
    /// the first look at a zone on a new boot recovers it, as the next writer would, before
    /// reading the log. Never called with the writer's lock held: a writer recovers first
    /// thing, so the marker it finds afterwards is of this boot.
    func recoverAfterRestartIfNeeded() throws(CKError) {
        // A zone that cannot be read is reported by what reads it next.
        guard let commit = try? peekMarker(), commit.bootID != CommitMarker.currentBootID else { return }
        try withLockFile { () throws(CKError) in _ = try recoverIfNeeded(try lockFile.descriptor()) }
    }
}
