#if canImport(Glibc)
#endif
import Synchronization

/// A zone's `lock` file as one opening holds it: the descriptor its writers `flock` and its
/// readers read the two markers through, the inode it was opened at, and the descriptors set
/// aside. Apart from the rest of ``ZoneFolder``'s state: its lock is its own, a leaf, never
/// held across a system call that waits.
final class ZoneLockFile: Sendable {
    let path: String
    private let zoneName: String
    private struct Held {
        var fd: Int32 = -1
        var inode: UInt64 = 0
        /// Lock files set aside (``retire()``: a zone made again at this path, or a second
        /// opening two threads raced to make), closed with this object, never while a thread
        /// may still lock or read them by their numbers.
        var retired: [Int32] = []
    }
    private let held = Mutex(Held())
    /// The markers as this opening last read or wrote them.
    private let markers = MarkerMemo()

    init(path: String, zoneName: String) {
        self.path = path
        self.zoneName = zoneName
    }

    deinit {
        held.withLock { held in
            if held.fd >= 0 { Syscall.close(held.fd) }
            for fd in held.retired { Syscall.close(fd) }
        }
    }

    /// The descriptor held, opened at first use.
    func descriptor() throws(CKError) -> Int32 { try descriptorAndInode().fd }

    /// The descriptor held and its inode, read together; opened at first use.
    func descriptorAndInode() throws(CKError) -> (fd: Int32, inode: UInt64) {
        if let known = held.withLock({ $0.fd >= 0 ? ($0.fd, $0.inode) : nil }) { return known }
        let fd: Int32
        switch Syscall.open(path, Posix.O_RDWR) {
        case .success(let f): fd = f
        case .failure(let e) where e.errno == Posix.ENOENT:
            throw CKError(.zoneNotFound, "zone \(zoneName) does not exist; create it with `ckfs zone create \(zoneName)`")
        case .failure(let e): throw CKError(.internalError, "cannot open the lock of zone \(zoneName)", cause: .system(e))
        }
        let inode: UInt64
        switch Syscall.fstat(fd, path: path) {
        case .success(let st): inode = st.inode
        case .failure(let e):
            Syscall.close(fd)
            throw CKError(.internalError, "cannot stat \(path)", cause: .system(e))
        }
        // Another thread may have opened it meanwhile: one is kept, the other set aside.
        return held.withLock { held -> (fd: Int32, inode: UInt64) in
            if held.fd >= 0 {
                held.retired.append(fd)
                return (held.fd, held.inode)
            }
            held.fd = fd
            held.inode = inode
            return (fd, inode)
        }
    }

    /// The inode of the file held; 0 when none is.
    var inode: UInt64 { held.withLock { $0.fd >= 0 ? $0.inode : 0 } }

    /// Sets the file held aside: the next use opens the path again. Closed with this object,
    /// never while a thread may still lock or read it by its number.
    func retire() {
        held.withLock { held in
            if held.fd >= 0 { held.retired.append(held.fd) }
            held.fd = -1
        }
    }

    /// Both markers, in one read; a lock file from before the apply marker existed has none.
    /// A marker whose bytes are the ones this opening last read or wrote is not parsed again:
    /// most reads find what its own writer and applier wrote.
    func readMarkers(_ fd: Int32) -> (CommitMarker?, ApplyMarker?) {
        guard case .success(let bytes) = Syscall.pread(fd, count: CommitMarker.size + ApplyMarker.size, offset: 0, path: path) else { return (nil, nil) }
        let commitBytes = bytes.prefix(CommitMarker.size)
        let applyBytes = bytes.count > ApplyMarker.offset ? bytes[ApplyMarker.offset...] : []
        return (markers.commit(in: commitBytes), markers.apply(in: applyBytes))
    }

    func writeCommitMarker(_ fd: Int32, _ marker: CommitMarker) throws(CKError) {
        let bytes = marker.bytes()
        try Syscall.pwriteAll(fd, bytes, offset: 0, path: path).orThrow(.internalError, "cannot write \(path)")
        markers.wrote(marker, as: bytes)
    }

    func writeApplyMarker(_ fd: Int32, _ marker: ApplyMarker) throws(CKError) {
        let bytes = marker.bytes()
        try Syscall.pwriteAll(fd, bytes, offset: Int64(ApplyMarker.offset), path: path).orThrow(.internalError, "cannot write \(path)")
        markers.wrote(marker, as: bytes)
    }
}
