import CCloudStoreShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls of the package, the one place that calls the C library for them: files
/// (here), processes (`Syscall+Spawn.swift`, `Syscall+Process.swift`), users
/// (`Syscall+Users.swift`) and folder watches (`Syscall+Inotify.swift`). Each retries
/// on EINTR and returns `Result<_, SystemCallError>`; callers turn failures into errors of
/// their own (the engine's ``CKError``).
package enum Syscall {
    public typealias R<T> = Result<T, SystemCallError>

    private static func fail<T>(_ call: String, _ path: String) -> R<T> {
        .failure(SystemCallError(call: call, path: path, errno: errno))
    }

    /// Files the engine creates are its owner's alone (0600, whatever the umask): a store's
    /// private data is reached through the mount or by the store's owner, never read directly
    /// by another OS user. Folders are 0700 (``mkdir(_:)``).
    public static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    /// Opens `path`, closed on exec whatever `flags` say.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = Syscall.fileMode) -> R<Int32> {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return .success(fd) }
            if errno != EINTR { return fail("open", path) }
        }
    }

    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) -> R<Void> {
        bytes.withUnsafeBytes { writeAll(fd, $0, path: path) }
    }

    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) -> R<Void> {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return fail("write", path)
            }
            // Nothing written and no error: it would not go further by trying again.
            if n == 0 { return .failure(SystemCallError(call: "write", path: path, errno: EIO)) }
            done += n
        }
        return .success(())
    }

    public static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], offset: Int64, path: String) -> R<Void> {
        bytes.withUnsafeBytes { buf in
            var done = 0
            while done < buf.count {
                let n = Glibc.pwrite(fd, buf.baseAddress! + done, buf.count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    return fail("pwrite", path)
                }
                done += n
            }
            return .success(())
        }
    }

    /// Moves the file offset of `fd` to `offset`.
    static func seek(_ fd: Int32, to offset: Int64, path: String) -> R<Void> {
        Glibc.lseek(fd, off_t(offset), SEEK_SET) < 0 ? fail("lseek", path) : .success(())
    }

    /// Reads `count` bytes at `offset`, fewer at the end of the file.
    static func pread(_ fd: Int32, count: Int, offset: Int64, path: String) -> R<[UInt8]> {
        var failure: SystemCallError?
        // Not zeroed first: the kernel writes the bytes, and only those read are kept (a
        // megabyte of the log is read this way in pieces).
        let out = [UInt8](unsafeUninitializedCapacity: count) { buf, initialized in
            var done = 0
            while done < count {
                let n = Glibc.pread(fd, buf.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = SystemCallError(call: "pread", path: path, errno: errno)
                    break
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { return .failure(failure) }
        return .success(out)
    }

    /// The whole file, or nil when it does not exist.
    static func readFile(_ path: String) -> R<[UInt8]?> {
        readFileAndStatus(path).map { $0?.bytes }
    }

    /// A whole file and the status of the very file read (not of a later replacement); its
    /// times only when `times` (see ``stat(_:times:)``: record files are read this way and
    /// written at saves, so their times must not be asked for).
    static func readFileAndStatus(_ path: String, times: Bool = false) -> R<(bytes: [UInt8], status: FileStatus)?> {
        readFileKeepingItOpen(path, times: times).map { read in
            read.map { close($0.fd); return ($0.bytes, $0.status) }
        }
    }

    /// ``readFileAndStatus(_:times:)``, and the descriptor it read through, left open for the
    /// caller to close. While it is open the file's inode is not given to another file, so a
    /// later `stat` of the path that finds the same inode (and size and times) finds this file.
    static func readFileKeepingItOpen(_ path: String, times: Bool = false) -> R<(bytes: [UInt8], status: FileStatus, fd: Int32)?> {
        let fd: Int32
        switch open(path, O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e): return e.errno == ENOENT ? .success(nil) : .failure(e)
        }
        var keep = false
        defer { if !keep { close(fd) } }
        let status: FileStatus
        switch fstat(fd, path: path, times: times) {
        case .success(let st): status = st
        case .failure(let e): return .failure(e)
        }
        var out: [UInt8] = []
        var capacity = max(Int(status.size), 0) + 1
        while true {
            switch pread(fd, count: capacity - out.count, offset: Int64(out.count), path: path) {
            case .failure(let e): return .failure(e)
            case .success(let chunk):
                out += chunk
                if out.count < capacity {
                    keep = true
                    return .success((out, status, fd))
                }
                capacity *= 2
            }
        }
    }

    static func fsync(_ fd: Int32, path: String) -> R<Void> {
        while Glibc.fsync(fd) != 0 {
            if errno != EINTR { return fail("fsync", path) }
        }
        return .success(())
    }

    public static func fdatasync(_ fd: Int32, path: String) -> R<Void> {
        while Glibc.fdatasync(fd) != 0 {
            if errno != EINTR { return fail("fdatasync", path) }
        }
        return .success(())
    }

    static func syncfs(_ fd: Int32, path: String) -> R<Void> {
        CCloudStoreShims_syncfs(fd) == 0 ? .success(()) : fail("syncfs", path)
    }

    static func rename(_ from: String, _ to: String) -> R<Void> {
        Glibc.rename(from, to) == 0 ? .success(()) : fail("rename", "\(from) → \(to)")
    }

    /// A new file with no name in `directory`, open for writing (O_TMPFILE): nil where the file
    /// system or kernel makes none, so the caller creates a named temp file instead.
    static func openUnnamed(in directory: String, mode: mode_t = Syscall.fileMode) -> R<Int32?> {
        while true {
            let fd = CCloudStoreShims_openUnnamed(directory, UInt32(mode))
            if fd >= 0 { return .success(fd) }
            switch errno {
            case EINTR: continue
            case EOPNOTSUPP, EISDIR, EINVAL: return .success(nil)
            default: return fail("open (unnamed file)", directory)
            }
        }
    }

    /// Gives the unnamed file `fd` the name `path`; fails with EEXIST when the name is taken.
    static func link(_ fd: Int32, to path: String) -> R<Void> {
        CCloudStoreShims_linkUnnamed(fd, path) == 0 ? .success(()) : fail("linkat", path)
    }

    /// Removes a file; a missing file is not an error.
    public static func unlink(_ path: String) -> R<Void> {
        Glibc.unlink(path) == 0 || errno == ENOENT ? .success(()) : fail("unlink", path)
    }

    /// Makes a directory (0700, see ``fileMode``); one that exists is not an error.
    public static func mkdir(_ path: String) -> R<Void> {
        Glibc.mkdir(path, directoryMode) == 0 || errno == EEXIST ? .success(()) : fail("mkdir", path)
    }

    static func rmdir(_ path: String) -> R<Void> {
        Glibc.rmdir(path) == 0 || errno == ENOENT ? .success(()) : fail("rmdir", path)
    }

    static func ftruncate(_ fd: Int32, _ length: Int64, path: String) -> R<Void> {
        while Glibc.ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { return fail("ftruncate", path) }
        }
        return .success(())
    }

    /// Takes (or with `LOCK_UN` drops) an advisory lock, waiting for it.
    static func flock(_ fd: Int32, _ operation: Int32, path: String) -> R<Void> {
        while CCloudStoreShims_flock(fd, operation) != 0 {
            if errno != EINTR { return fail("flock", path) }
        }
        return .success(())
    }

    /// Takes an advisory lock without waiting: false when another open file holds one that
    /// conflicts (`LOCK_NB` is added to `operation`).
    static func tryFlock(_ fd: Int32, _ operation: Int32, path: String) -> R<Bool> {
        while CCloudStoreShims_flock(fd, operation | Glibc.LOCK_NB) != 0 {
            if errno == EWOULDBLOCK { return .success(false) }
            if errno != EINTR { return fail("flock", path) }
        }
        return .success(true)
    }

    /// Renames `from` to `to` only when nothing has the name `to` (an empty folder included,
    /// which rename(2) would replace): `EEXIST` when something has.
    static func renameNoReplace(_ from: String, _ to: String) -> R<Void> {
        CCloudStoreShims_renameNoReplace(from, to) == 0 ? .success(()) : fail("renameat2(RENAME_NOREPLACE)", to)
    }

    /// Takes (`exclusive`) or drops an open-file-description lock on a byte range, waiting.
    static func rangeLock(_ fd: Int32, start: Int, length: Int, exclusive: Bool, path: String) -> R<Void> {
        while CCloudStoreShims_rangeLock(fd, start, length, exclusive ? 1 : 0) != 0 {
            if errno != EINTR { return fail("fcntl(F_OFD_SETLKW)", path) }
        }
        return .success(())
    }

    public struct FileStatus: Equatable, Sendable {
        public var size: Int64
        public var inode: UInt64
        public var isDirectory: Bool
        /// Milliseconds since 1970. The times, the owner and the permissions are 0 unless asked
        /// for (`stat(_:times: true)`).
        public var modified: Int64
        var device: UInt64 = 0
        /// Modification and status change times in nanoseconds: with the inode and size they
        /// tell one version of a file from the next.
        public var modifiedNanos: Int64 = 0
        public var changedNanos: Int64 = 0
        public var owner: UInt32 = 0
        public var group: UInt32 = 0
        /// The permission bits (`0o7777` of the mode).
        public var permissions: UInt32 = 0
    }

    private static func status(_ st: stat) -> FileStatus {
        FileStatus(size: Int64(st.st_size), inode: UInt64(st.st_ino), isDirectory: (st.st_mode & S_IFMT) == S_IFDIR,
                   modified: Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec) / 1_000_000,
                   device: UInt64(st.st_dev),
                   modifiedNanos: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
                   changedNanos: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec),
                   owner: st.st_uid, group: st.st_gid, permissions: UInt32(st.st_mode & 0o7777))
    }

    /// The status of `path`; nil when it does not exist. Its times, owner and permissions
    /// (and only then) when `times`: ask for them only where a version is told by them, never
    /// on a file written at every save (see `CCloudStoreShims_statIdentity`: seeing a file's
    /// times costs the next journal sync a second disk write). With `followingLinks` false, a
    /// symlink's own status (`lstat`; times asked for whatever `times` says).
    public static func stat(_ path: String, times: Bool = false, followingLinks: Bool = true) -> R<FileStatus?> {
        if !times && followingLinks {
            switch identity(fd: -1, path: path, naming: path) {
            case .success(let st): return .success(st)
            case .failure(let e): return e.errno == ENOENT ? .success(nil) : .failure(e)
            }
        }
        var st = Glibc.stat()
        if (followingLinks ? systemStat(path, &st) : lstat(path, &st)) == 0 { return .success(status(st)) }
        return errno == ENOENT ? .success(nil) : fail(followingLinks ? "stat" : "lstat", path)
    }

    /// Gives the open file `fd` to `owner` and `group` (root only).
    public static func fchown(_ fd: Int32, owner: UInt32, group: UInt32, path: String) -> R<Void> {
        Glibc.fchown(fd, owner, group) == 0 ? .success(()) : fail("fchown", path)
    }

    /// What an errno means, as `strerror` says it.
    public static func errorText(_ errno: Int32) -> String {
        String(cString: strerror(errno))
    }

    /// Writes out what the C library's output streams hold (`fflush(NULL)`).
    public static func flushOutputStreams() {
        fflush(nil)
    }

    /// Whether `fd` is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// Mounts a file system that takes no source device (fusectl, say); root only.
    public static func mount(_ type: String, at target: String) -> R<Void> {
        Glibc.mount(type, target, type, 0, nil) == 0 ? .success(()) : fail("mount", target)
    }

    /// Bytes free for an unprivileged user on the file system holding `path` (`statfs`).
    static func freeBytes(_ path: String) -> R<Int64> {
        while true {
            let free = CCloudStoreShims_freeBytes(path)
            if free >= 0 { return .success(free) }
            guard errno == EINTR else { return fail("statfs", path) }
        }
    }

    /// The status of an open file; its times only when `times` (as in ``stat(_:times:)``).
    static func fstat(_ fd: Int32, path: String, times: Bool = false) -> R<FileStatus> {
        if !times {
            return identity(fd: fd, path: nil, naming: path)
        }
        var st = Glibc.stat()
        return systemFstat(fd, &st) == 0 ? .success(status(st)) : fail("fstat", path)
    }

    /// `statx` of `path`, or of `fd` when `path` is nil, asking for no times; errors name `naming`.
    private static func identity(fd: Int32, path: String?, naming: String) -> R<FileStatus> {
        var mode: UInt32 = 0, inode: UInt64 = 0, size: Int64 = 0, device: UInt64 = 0
        guard CCloudStoreShims_statIdentity(fd, path, &mode, &inode, &size, &device) == 0 else {
            return fail("statx", naming)
        }
        return .success(FileStatus(size: size, inode: inode, isDirectory: (mode & S_IFMT) == S_IFDIR, modified: 0, device: device))
    }

    /// The permission bits of `path` itself (`lstat`: a symlink is not followed) and whether
    /// it is a folder or a symlink; nil when it does not exist.
    static func permissions(_ path: String) -> R<(mode: UInt32, isDirectory: Bool, isSymlink: Bool)?> {
        var st = Glibc.stat()
        if lstat(path, &st) == 0 {
            let type = st.st_mode & S_IFMT
            return .success((UInt32(st.st_mode & 0o7777), type == S_IFDIR, type == S_IFLNK))
        }
        return errno == ENOENT ? .success(nil) : fail("lstat", path)
    }

    /// The type (`f_type`, a magic number) of the file system holding `path`; nil when it
    /// cannot be told.
    static func fileSystemType(_ path: String) -> Int64? {
        let type = CCloudStoreShims_fileSystemType(path)
        return type < 0 ? nil : Int64(type)
    }

    /// The names in a directory, without `.` and `..`; nil when it does not exist.
    public static func listDirectory(_ path: String) -> R<[String]?> {
        var names: [String] = []
        return forEachName(in: path) { names.append(String(cString: $0)) }.map { $0 ? names : nil }
    }

    /// Calls `body` with each name in a directory (a C string valid during the call), without
    /// `.` and `..`: a folder of a million files is read without a million names at once.
    /// False when the directory does not exist.
    static func forEachName(in path: String, _ body: (UnsafePointer<CChar>) -> Void) -> R<Bool> {
        guard let dir = opendir(path) else {
            return errno == ENOENT ? .success(false) : fail("opendir", path)
        }
        defer { closedir(dir) }
        // Not the entry's `d_name` through `pointee`: that copies all 256 bytes of the field,
        // past the end of a short last entry and of readdir's buffer (a server crashed so).
        while true {
            errno = 0
            guard let name = CCloudStoreShims_nextName(UnsafeMutableRawPointer(dir)) else { break }
            if strcmp(name, ".") != 0, strcmp(name, "..") != 0 { body(name) }
        }
        // NULL with errno set is a failed read, not the end.
        if errno != 0 { return fail("readdir", path) }
        return .success(true)
    }
}

// Outside `Syscall`, whose own `stat` and `fstat` would shadow these.
private func systemStat(_ path: String, _ st: inout stat) -> Int32 { stat(path, &st) }
private func systemFstat(_ fd: Int32, _ st: inout stat) -> Int32 { fstat(fd, &st) }
