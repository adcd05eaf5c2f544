#if canImport(Glibc)
#endif

/// The file operations on which durability rests, behind a protocol so that tests can make
/// them fail (EIO, ENOSPC) at a chosen moment, as SQLite's test VFS does.
package protocol StorageIO: Sendable {
    func write(_ fd: Int32, _ bytes: [UInt8], path: String) -> Result<Void, SystemCallError>
    func sync(_ fd: Int32, path: String, dataOnly: Bool) -> Result<Void, SystemCallError>
    func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError>
    /// Gives the unnamed file `fd` the name `path` (see `FileWriter.create(_:with:)`).
    func link(_ fd: Int32, to path: String) -> Result<Void, SystemCallError>
}

extension StorageIO {
    public func link(_ fd: Int32, to path: String) -> Result<Void, SystemCallError> {
        Syscall.link(fd, to: path)
    }
}

/// The real thing.
package struct PosixIO: StorageIO {
    public init() {}

    public func write(_ fd: Int32, _ bytes: [UInt8], path: String) -> Result<Void, SystemCallError> {
        bytes.withUnsafeBytes { Syscall.writeAll(fd, $0, path: path) }
    }

    public func sync(_ fd: Int32, path: String, dataOnly: Bool) -> Result<Void, SystemCallError> {
        dataOnly ? Syscall.fdatasync(fd, path: path) : Syscall.fsync(fd, path: path)
    }

    public func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError> {
        Syscall.rename(from, to)
    }
}

/// Writing whole files the crash-safe way.
struct FileWriter: Sendable {
    let io: any StorageIO

    static let tempPrefix = ".ckfs-tmp-"

    /// Replaces `path` with `bytes`: a new temp file in the same directory, written, synced
    /// when `durable`, renamed over the old one, and the directory synced when `durable`.
    /// Readers see the old file or the new one, never a part. The new file is 0600 (see
    /// `Syscall.fileMode`), whatever the old one's mode was.
    func replace(_ path: String, with bytes: [UInt8], durable: Bool) throws(CKError) {
        try replace(path, durable: durable) { (fd, temp) throws(CKError) in
            try io.write(fd, bytes, path: temp).orThrow(.internalError, "cannot write \(path)")
        }
    }

    /// Replaces `path` as ``replace(_:with:durable:)`` does with the bytes `range` of the open
    /// file `source`, copied a megabyte at a time: a log's kept half is never held whole in
    /// memory.
    func replace(_ path: String, copying range: Range<Int64>, of source: Int32, sourcePath: String, durable: Bool) throws(CKError) {
        try replace(path, durable: durable) { (fd, temp) throws(CKError) in
            var at = range.lowerBound
            while at < range.upperBound {
                let count = Int(min(range.upperBound - at, 1 << 20))
                let piece = try Syscall.pread(source, count: count, offset: at, path: sourcePath).orThrow(.internalError, "cannot read \(sourcePath)")
                guard piece.count == count else {
                    throw CKError(.internalError, "\(sourcePath) ended at byte \(at + Int64(piece.count)) while copying up to \(range.upperBound)")
                }
                try io.write(fd, piece, path: temp).orThrow(.internalError, "cannot write \(path)")
                at += Int64(count)
            }
        }
    }

    /// The temp file, written by `write` (given its descriptor and name), synced when
    /// `durable`, renamed over `path`.
    private func replace(_ path: String, durable: Bool, write: (Int32, String) throws(CKError) -> Void) throws(CKError) {
        let (dir, name) = StoreLayout.split(path)
        let temp = Self.tempName(dir, name)
        let fd = try Syscall.open(temp, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_EXCL).orThrow(.internalError, "cannot create \(temp)")
        do throws(CKError) {
            defer { Syscall.close(fd) }
            try write(fd, temp)
            if durable { try io.sync(fd, path: temp, dataOnly: false).orThrow(.internalError, "cannot sync \(path)") }
        } catch {
            _ = Syscall.unlink(temp)
            throw error
        }
        try rename(temp, over: path)
        if durable { try syncDirectory(dir) }
    }

    /// Puts the new file `path` holding `bytes` where none is expected, without fsync: an
    /// unnamed file (O_TMPFILE) is written and then linked to its name, one change to the
    /// folder where `replace` makes two (create, rename), and so the cheaper of the two.
    /// Readers see the whole file or none, and a crash
    /// before the link leaves nothing behind. When the name turns out to be taken the written
    /// file is linked to a temp name and renamed over it, as `replace` does; where the file
    /// system makes no unnamed files, or /proc is missing, this is `replace`.
    func create(_ path: String, with bytes: [UInt8]) throws(CKError) {
        let (dir, name) = StoreLayout.split(path)
        guard let fd = try Syscall.openUnnamed(in: dir).orThrow(.internalError, "cannot create a file in \(dir)") else {
            return try replace(path, with: bytes, durable: false)
        }
        defer { Syscall.close(fd) }
        try io.write(fd, bytes, path: path).orThrow(.internalError, "cannot write \(path)")
        let linked = io.link(fd, to: path)
        guard case .failure(let e) = linked else { return }
        switch e.errno {
        case Posix.EEXIST:
            let temp = Self.tempName(dir, name)
            try io.link(fd, to: temp).orThrow(.internalError, "cannot create \(temp)")
            try rename(temp, over: path)
        case Posix.ENOENT:
            // No /proc (or the folder is gone, which `replace` then reports).
            try replace(path, with: bytes, durable: false)
        default:
            try linked.orThrow(.internalError, "cannot create \(path)")
        }
    }

    /// Replaces `path` durably with the unnamed file `fd` (from `Syscall.openUnnamed`), after
    /// writing `bytes` into it: linked to a temp name, synced once named (the inode then says
    /// it has a link), renamed over `path`, and the folder synced. For a file whose inode the
    /// caller chose, where `replace` would take whatever inode comes.
    func replace(_ path: String, withUnnamed fd: Int32, bytes: [UInt8]) throws(CKError) {
        let (dir, name) = StoreLayout.split(path)
        try io.write(fd, bytes, path: path).orThrow(.internalError, "cannot write \(path)")
        let temp = Self.tempName(dir, name)
        try io.link(fd, to: temp).orThrow(.internalError, "cannot create \(temp)")
        if case .failure(let e) = io.sync(fd, path: temp, dataOnly: false) {
            _ = Syscall.unlink(temp)
            throw CKError(.internalError, "cannot sync \(path)", cause: .system(e))
        }
        try rename(temp, over: path)
        try syncDirectory(dir)
    }

    /// Renames the temp file `temp` over `path`; one that cannot be renamed is removed.
    private func rename(_ temp: String, over path: String) throws(CKError) {
        let renamed = io.rename(temp, path)
        if case .failure = renamed { _ = Syscall.unlink(temp) }
        try renamed.orThrow(.internalError, "cannot replace \(path)")
    }

    /// A new name in `dir` for a file that will become `name`: the name itself only while the
    /// whole stays a short file name, so that a file of a name near the file system's 255 bytes
    /// can be written too.
    private static func tempName(_ dir: String, _ name: String) -> String {
        let unique = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        return dir + "/" + tempPrefix + (name.utf8.count <= 200 ? name + "-" : "") + unique
    }

    func syncDirectory(_ dir: String) throws(CKError) {
        let fd = try Syscall.open(dir, Posix.O_RDONLY | Posix.O_DIRECTORY).orThrow(.internalError, "cannot open directory \(dir)")
        defer { Syscall.close(fd) }
        try io.sync(fd, path: dir, dataOnly: false).orThrow(.internalError, "cannot sync directory \(dir)")
    }

    /// Makes a directory and syncs its parent so the new entry is durable.
    func makeDirectory(_ path: String) throws(CKError) {
        if case .success(let st?) = Syscall.stat(path), st.isDirectory { return }
        try Syscall.mkdir(path).orThrow(.internalError, "cannot create directory \(path)")
        try syncDirectory(StoreLayout.split(path).dir)
    }
}

extension FileWriter {
    /// Makes `path` and the folders above it that are missing, each one durable.
    func makeDirectories(_ path: String) throws(CKError) {
        if case .success(let st?) = Syscall.stat(path), st.isDirectory { return }
        let parent = StoreLayout.split(path).dir
        if parent != path && parent != "/" && parent != "." { try makeDirectories(parent) }
        try makeDirectory(path)
    }
}
