import Foundation

/// A zone folder made whole from a snapshot (``ZoneFolders/restoreZone(_:lastSeq:usage:_:)``):
/// built under a temporary name beside the zones (`.creating-…`, which fsck removes if a
/// crash leaves it), synced, and renamed into place, so the zone appears whole or not at all.
/// The log is the snapshot's entries framed as the file backend frames them, `zone.json` the
/// snapshot's; every record file is written and the file system synced before the rename,
/// and the lock file's markers say every entry is applied, so nothing is replayed on this
/// boot (after a restart, what follows the checkpoint is replayed, as for any zone).
final class ZoneFolderRestore: ZoneRestore {
    let temp: String
    let zoneID: ZoneID
    let writer: FileWriter
    private let log: Int32
    private(set) var logSize: Int64 = 0
    private(set) var lastEntrySeq: Int64 = 0
    /// The assets added, and those the records added name (each with a record naming it).
    private var assets: Set<String> = []
    private var named: [String: String] = [:]

    init(temp: String, zoneID: ZoneID, writer: FileWriter) throws(CKError) {
        self.temp = temp
        self.zoneID = zoneID
        self.writer = writer
        let path = StoreLayout.logFile(temp)
        log = try Syscall.open(path, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_APPEND).orThrow(.internalError, "cannot create \(path)")
    }

    deinit { Syscall.close(log) }

    func addEntry(_ entry: LogEntry) throws(CKError) {
        guard entry.seq > lastEntrySeq else {
            throw CKError(.invalidArguments, "the history of zone \(zoneID.zoneName) gives entry \(entry.seq) after entry \(lastEntrySeq); entries must come in order, each once")
        }
        guard lastEntrySeq == 0 || entry.seq == lastEntrySeq + 1 else {
            throw CKError(.invalidArguments, "the history of zone \(zoneID.zoneName) has a gap: entry \(entry.seq) follows entry \(lastEntrySeq), and the changes between are lost; restore its log.jsonl from the store it was copied from")
        }
        let frame = entry.frame()
        let path = StoreLayout.logFile(temp)
        try Syscall.writeAll(log, frame, path: path).orThrow(.internalError, "cannot write \(path)")
        logSize += Int64(frame.count)
        lastEntrySeq = entry.seq
    }

    func addRecord(_ record: Record) throws(CKError) {
        let name = record.recordID.recordName
        try Names.checkRecordName(name, allowSystem: true)
        for checksum in record.assetChecksums where named[checksum] == nil { named[checksum] = name }
        // A name given twice finds its file made: refused, as a zone holds one record of a name.
        try writeNew(StoreLayout.recordFile(temp, name: name), RecordCoding.fileBytes(record),
                     taken: "zone \(zoneID.zoneName) gives record \(name) twice; a zone holds one record of a name")
    }

    func addAsset(checksum: String, file: String) throws(CKError) {
        guard AssetHasher.isChecksum(checksum) else {
            throw CKError(.invalidArguments, "\(checksum) is not an asset checksum (64 lowercase hex digits of SHA-256)")
        }
        guard let bytes = try Syscall.readFile(file).orThrow(.assetFileNotFound, "cannot read asset file \(file)") else {
            throw CKError(.assetFileNotFound, "asset file \(file) does not exist")
        }
        guard AssetHasher.sha256Hex(bytes) == checksum else {
            throw CKError(.assetFileModified, "asset file \(file) does not hold asset \(checksum) (its SHA-256 differs); the copy is damaged")
        }
        try writeNew(StoreLayout.assetFile(temp, checksum: checksum), bytes, taken: "zone \(zoneID.zoneName) gives asset \(checksum) twice")
        assets.insert(checksum)
    }

    /// Writes a file of the folder being built with one `open` of a new name, as `tar x` does:
    /// no temporary name and rename, since no reader sees the folder until it is whole, and
    /// no sync, since ``finish(_:lastSeq:usage:)`` syncs the file system once.
    /// `taken` says what is wrong with the copy when the name was made already.
    private func writeNew(_ path: String, _ bytes: [UInt8], taken: String? = nil) throws(CKError) {
        let opened = Syscall.open(path, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_EXCL, mode: 0o600)
        if case .failure(let e) = opened, e.errno == Posix.EEXIST, let taken { throw CKError(.invalidArguments, taken) }
        let fd = try opened.orThrow(.internalError, "cannot create \(path)")
        defer { Syscall.close(fd) }
        try writer.io.write(fd, bytes, path: path).orThrow(.internalError, "cannot write \(path)")
    }

    /// Writes what makes the folder a zone at commit `lastSeq`: `zone.json` as the snapshot
    /// has it, the lock file's markers; then syncs the file system once, for every file of
    /// the folder (the log, the records, the assets, these two).
    func finish(_ meta: ZoneMeta, lastSeq: Int64, usage: Int64) throws(CKError) {
        guard lastEntrySeq == 0 || lastEntrySeq == lastSeq else {
            throw CKError(.invalidArguments, "the history of zone \(zoneID.zoneName) ends at entry \(lastEntrySeq), not at its last commit \(lastSeq); restore its log.jsonl from the store it was copied from")
        }
        if let (checksum, record) = named.first(where: { !assets.contains($0.key) }) {
            throw CKError(.assetFileNotFound, "record \(record) of zone \(zoneID.zoneName) names asset \(checksum), which the copy does not hold; put the asset's file back (assets/\(checksum)) and copy again")
        }
        // As the snapshot has it: its checkpoint (the entries after it are in the log, so a
        // replay after a restart finds them), its usage and client change token then.
        try writeNew(StoreLayout.zoneFile(temp), JSONWriter.pretty(meta.json()))
        let commit = CommitMarker(bootID: CommitMarker.currentBootID, seq: lastSeq, usage: usage, busy: false)
        let apply = ApplyMarker(bootID: CommitMarker.currentBootID, applied: lastSeq, end: logSize)
        try writeNew(StoreLayout.lockFile(temp), commit.bytes() + apply.bytes())
        let dfd = try Syscall.open(temp, Posix.O_RDONLY | Posix.O_DIRECTORY).orThrow(.internalError, "cannot open \(temp)")
        defer { Syscall.close(dfd) }
        try Syscall.syncfs(dfd, path: temp).orThrow(.internalError, "cannot sync \(temp)")
    }
}

extension ZoneFolders {
    func restoreZone(_ meta: ZoneMeta, lastSeq: Int64, usage: Int64, _ body: (any ZoneRestore) throws(CKError) -> Void) throws(CKError) {
        let target = StoreLayout.zoneDirectory(directory, zone: meta.zoneName)
        if case .success(_?) = Syscall.stat(target) {
            throw CKError(.invalidArguments, "zone \(meta.zoneName) of \(ownerName.isEmpty ? "the database" : ownerName) exists already; a zone is restored only where there is none (delete it first, or import into an empty store)")
        }
        let writer = FileWriter(io: table.io)
        let parent = StoreLayout.zonesDirectory(directory)
        try writer.makeDirectories(parent)
        let temp = parent + "/.creating-" + StoreLayout.encode(meta.zoneName) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        do throws(CKError) {
            try Syscall.mkdir(temp).orThrow(.internalError, "cannot create \(temp)")
            try Syscall.mkdir(StoreLayout.recordsDirectory(temp)).orThrow(.internalError, "cannot create records in \(temp)")
            try Syscall.mkdir(StoreLayout.assetsDirectory(temp)).orThrow(.internalError, "cannot create assets in \(temp)")
            let restore = try ZoneFolderRestore(temp: temp, zoneID: ZoneID(zoneName: meta.zoneName, ownerName: ownerName), writer: writer)
            try body(restore)
            try restore.finish(meta, lastSeq: lastSeq, usage: usage)
            switch table.io.rename(temp, target) {
            case .success: try writer.syncDirectory(parent)
            case .failure(let e) where e.errno == Posix.ENOTEMPTY || e.errno == Posix.EEXIST:
                throw CKError(.invalidArguments, "zone \(meta.zoneName) was made while it was restored; nothing of the copy was kept")
            case .failure(let e):
                throw CKError(.internalError, "cannot put zone \(meta.zoneName) in place", cause: .system(e))
            }
        } catch {
            ZoneFolder.removeTree(temp)
            throw error
        }
    }
}
