import Foundation

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

    /// The log read a piece at a time (4 MiB of whole lines, or one line if longer), so what
    /// is held is a piece's entries, not the log's.
    func forEachEntry(_ body: (LogEntry) throws(CKError) -> Void) throws(CKError) {
        let path = folder.logPath
        let fd = try Syscall.open(path, Posix.O_RDONLY).orThrow(.internalError, "cannot open \(path)")
        defer { Syscall.close(fd) }
        let size = try Syscall.fstat(fd, path: path).orThrow(.internalError, "cannot stat \(path)").size
        var offset: Int64 = 0
        var piece = 4 << 20
        while offset < size {
            let bytes = try Syscall.pread(fd, count: Int(min(Int64(piece), size - offset)), offset: offset, path: path)
                .orThrow(.internalError, "cannot read \(path)")
            folder.noteLogRead(bytes.count)
            guard let lastNewline = bytes.lastIndex(ofByte: 0x0A) else {
                guard offset + Int64(bytes.count) < size else {
                    throw CKError(.internalError, "\(path) ends with an unfinished line at byte \(offset); run `ckfs fsck`, or restore the file from a backup")
                }
                piece *= 2
                continue
            }
            let scanned = LogScanner.scan(Array(bytes[...lastNewline]), baseOffset: offset, zoneID: folder.zoneID)
            if case .damaged(let at, let reason) = scanned.outcome {
                throw CKError(.internalError, "\(path) is damaged at byte \(at) (\(reason)); run `ckfs fsck`, or restore the file from a backup")
            }
            if case .tornTail(let at) = scanned.outcome {
                throw CKError(.internalError, "\(path) has a line that is no entry at byte \(at); run `ckfs fsck`, or restore the file from a backup")
            }
            for (entry, _) in scanned.entries where entry.seq <= lastSeq { try body(entry) }
            offset += Int64(lastNewline + 1)
        }
    }

    /// The record files with the versions they lack yet, one record read at a time.
    func forEachRecord(_ body: (Record) throws(CKError) -> Void) throws(CKError) {
        for name in try folder.recordNames() {
            if let record = try transaction.record(name) { try body(record) }
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
