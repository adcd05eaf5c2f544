import Synchronization

/// A zone's `zone.json` as one opening of the zone last read it. The file is only ever
/// replaced whole (a new inode), so while its status is unchanged the one read last is still
/// right: an indexed lookup costs a `stat` instead of a read and a parse. The file read is held
/// open, so no other file (a zone made again) can take its inode. Its lock is its own, taken
/// alone.
final class ZoneMetaFile: Sendable {
    private struct Read {
        var status: Syscall.FileStatus
        var meta: ZoneMeta
        var fd: Int32
    }

    let path: String
    private let last = Mutex<Read?>(nil)

    init(path: String) { self.path = path }

    deinit {
        if let fd = last.withLock({ $0?.fd }) { Syscall.close(fd) }
    }

    /// The zone's settings as the file holds them now; `zoneNotFound` (naming `zoneName`) when
    /// there is no file.
    func read(zoneName: String) throws(CKError) -> ZoneMeta {
        if case .success(let status?) = Syscall.stat(path, times: true), let known = last.withLock({ $0 }), known.status == status {
            return known.meta
        }
        guard let read = try Syscall.readFileKeepingItOpen(path, times: true).orThrow(.internalError, "cannot read \(path)") else {
            throw CKError(.zoneNotFound, "zone \(zoneName) does not exist; create it with `ckfs zone create \(zoneName)`")
        }
        let meta: ZoneMeta
        do throws(CKError) { meta = try ZoneMeta.parse(read.bytes, path: path) } catch {
            Syscall.close(read.fd)
            throw error
        }
        let old = last.withLock { last -> Int32? in
            defer { last = Read(status: read.status, meta: meta, fd: read.fd) }
            return last?.fd
        }
        if let old { Syscall.close(old) }
        return meta
    }
}
