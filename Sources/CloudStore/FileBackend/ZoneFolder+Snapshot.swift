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

    /// The log read whole: it is at most `compactLogBytes` and a little more.
    func forEachEntry(_ body: (LogEntry) throws(CKError) -> Void) throws(CKError) {
        let bytes = try Syscall.readFile(folder.logPath).orThrow(.internalError, "cannot read \(folder.logPath)") ?? []
        folder.noteLogRead(bytes.count)
        let scanned = LogScanner.scan(bytes, baseOffset: 0, zoneID: folder.zoneID)
        if case .damaged(let at, let reason) = scanned.outcome {
            throw CKError(.internalError, "the log of zone \(folder.zoneID.zoneName) is damaged at byte \(at) (\(reason)); run `ckfs fsck`")
        }
        for (entry, _) in scanned.entries where entry.seq <= lastSeq { try body(entry) }
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
