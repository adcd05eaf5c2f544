import Foundation
import Synchronization

/// A zone folder read whole under its writer's locks (``ZoneFolder/snapshot(_:)``): the log as
/// it stands (every entry is in it: the journal only makes entries durable), the records as of
/// the last commit, the asset files.
final class ZoneFolderSnapshot: ZoneSnapshot {
    let folder: ZoneFolder
    let transaction: ZoneFolderTransaction
    let meta: ZoneMeta
    var lastSeq: Int64 { transaction.lastSeq }
    var usage: Int64 { transaction.usage }

    init(folder: ZoneFolder, transaction: ZoneFolderTransaction) throws(CKError) {
        self.folder = folder
        self.transaction = transaction
        self.meta = try folder.readMeta()
    }

    /// The log in pieces of ``ZoneTuning/copyLogBytesPerPiece`` bytes of whole lines (or one
    /// line if longer), read and parsed by a helper thread a piece ahead of `body`
    /// (``ReadAhead``), so what is held is two pieces' entries, not the log's.
    func forEachEntry(_ body: (LogEntry) throws(CKError) -> Void) throws(CKError) {
        let path = folder.logPath
        let fd = try Syscall.open(path, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(path)")
        defer { Syscall.close(fd) }
        let size = try Syscall.fstat(fd, path: path).orThrow(.internalError, "cannot stat \(path)").size
        let bytes = max(folder.tuning.copyLogBytesPerPiece, 1)
        var log = LogPieces(folder: folder, fd: fd, path: path, size: size, lastSeq: lastSeq, bytesPerPiece: bytes)
        // Each piece but the last takes at least `bytes`, so there are at most this many.
        let count = Int((size + Int64(bytes) - 1) / Int64(bytes))
        guard count > 1 else {
            while log.offset < size { for entry in try log.next() { try body(entry) } }
            return
        }
        let pieces = Mutex(log)
        // One helper: the pieces are read in order from where the last one ended, so the
        // piece's number is not needed.
        let ahead = ReadAhead<LogEntry>(pieces: count, helpers: 1, depth: 2) { (_) throws(CKError) -> [LogEntry] in
            try pieces.withLock { (log) throws(CKError) -> [LogEntry] in try log.next() }
        }
        try ahead.forEachPiece { (entries) throws(CKError) in
            for entry in entries { try body(entry) }
        }
        let reached = pieces.withLock { $0.offset }
        guard reached == size else {
            throw CKError(.internalError, "the copy of \(path) stopped at byte \(reached) of \(size); this is a bug in ckfs, please report it")
        }
    }

    /// The record files with the versions they lack yet, in name order: read and parsed by
    /// two helper threads (``ReadAhead``) a few pieces of ``ZoneTuning/copyRecordsPerPiece``
    /// records ahead of `body`, and not kept in the record cache (a copy reads each once).
    func forEachRecord(_ body: (Record) throws(CKError) -> Void) throws(CKError) {
        let names = try folder.recordNames()
        let folder = self.folder
        let piece = max(folder.tuning.copyRecordsPerPiece, 1)
        @Sendable func read(_ names: ArraySlice<String>) throws(CKError) -> [Record] {
            var records: [Record] = []
            records.reserveCapacity(names.count)
            for name in names {
                if let record = try folder.currentRecord(named: name, underWriteLock: true, beforeFileRead: { false }) { records.append(record) }
            }
            return records
        }
        guard names.count > piece else {
            for record in try read(names[...]) { try body(record) }
            return
        }
        let ahead = ReadAhead<Record>(pieces: (names.count + piece - 1) / piece) { (k) throws(CKError) -> [Record] in
            try read(names[k * piece..<min((k + 1) * piece, names.count)])
        }
        try ahead.forEachPiece { (records) throws(CKError) in
            for record in records { try body(record) }
        }
    }

    func forEachAsset(_ body: (_ checksum: String, _ file: String) throws(CKError) -> Void) throws(CKError) {
        for checksum in try folder.assetFileChecksums().sorted() {
            try body(checksum, StoreLayout.assetFile(folder.directory, checksum: checksum))
        }
    }
}

extension ZoneFolder {
    /// Under the writer's locks, as a commit that commits nothing: other writers wait until
    /// `body` returns.
    func snapshot<T>(_ body: (any ZoneSnapshot) throws(CKError) -> T) throws(CKError) -> T {
        try self.write({ (txn) throws(CKError) -> (LogEntry?, T) in
            guard let transaction = txn as? ZoneFolderTransaction else { throw CKError(.internalError, "a zone folder's transaction is its own") }
            return (nil, try body(try ZoneFolderSnapshot(folder: self, transaction: transaction)))
        }, committed: nil)
    }
}

/// The log of a snapshot read from the start, a piece of whole lines at a time.
private struct LogPieces {
    let folder: ZoneFolder
    let fd: Int32
    let path: String
    let size: Int64
    let lastSeq: Int64
    let bytesPerPiece: Int
    var offset: Int64 = 0

    /// The entries of the next `bytesPerPiece` bytes and the rest of the line they end in,
    /// so that every piece but the last takes at least `bytesPerPiece`; none at the end.
    mutating func next() throws(CKError) -> [LogEntry] {
        guard offset < size else { return [] }
        var bytes = try read(at: offset, count: bytesPerPiece)
        // On to the end of the line: 64 KiB more at a time, doubled while no newline comes.
        var step = 64 << 10
        while bytes.last != 0x0A {
            let end = offset + Int64(bytes.count)
            guard end < size else {
                let lineStart = offset + Int64(bytes.lastIndex(ofByte: 0x0A).map { $0 + 1 } ?? 0)
                throw CKError(.internalError, "\(path) ends with an unfinished line at byte \(lineStart); run `ckfs fsck`, or restore the file from a backup")
            }
            let more = try read(at: end, count: step)
            if let newline = more.firstIndex(of: 0x0A) {
                bytes += more[...newline]
            } else {
                bytes += more
                step *= 2
            }
        }
        let scanned = LogScanner.scan(bytes, baseOffset: offset, zoneID: folder.zoneID)
        if case .damaged(let at, let reason) = scanned.outcome {
            throw CKError(.internalError, "\(path) is damaged at byte \(at) (\(reason)); run `ckfs fsck`, or restore the file from a backup")
        }
        if case .tornTail(let at) = scanned.outcome {
            throw CKError(.internalError, "\(path) has a line that is no entry at byte \(at); run `ckfs fsck`, or restore the file from a backup")
        }
        offset += Int64(bytes.count)
        return scanned.entries.compactMap { $0.0.seq <= lastSeq ? $0.0 : nil }
    }

    private func read(at position: Int64, count: Int) throws(CKError) -> [UInt8] {
        let bytes = try Syscall.pread(fd, count: Int(min(Int64(count), size - position)), offset: position, path: path)
            .orThrow(.internalError, "cannot read \(path)")
        folder.noteLogRead(bytes.count)
        guard !bytes.isEmpty else { throw CKError(.internalError, "\(path) ended at byte \(position) while it was read; it is \(size) bytes") }
        return bytes
    }
}
