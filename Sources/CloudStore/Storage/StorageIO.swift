#if canImport(Glibc)
import Glibc
#endif

/// The file operations on which durability rests, behind a protocol so that tests can make
/// them fail (EIO, ENOSPC) at a chosen moment, as SQLite's test VFS does.
public protocol StorageIO: Sendable {
    func write(_ fd: Int32, _ bytes: [UInt8], path: String) -> Result<Void, SystemCallError>
    func sync(_ fd: Int32, path: String, dataOnly: Bool) -> Result<Void, SystemCallError>
    func rename(_ from: String, _ to: String) -> Result<Void, SystemCallError>
}

/// The real thing.
public struct PosixIO: StorageIO {
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

/// Writing whole files the crash-safe way (DESIGN §3).
struct FileWriter: Sendable {
    let io: any StorageIO

    static let tempPrefix = ".ckfs-tmp-"

    /// Replaces `path` with `bytes`: a new temp file in the same directory, written, synced
    /// when `durable`, renamed over the old one, and the directory synced when `durable`.
    /// Readers see the old file or the new one, never a part.
    func replace(_ path: String, with bytes: [UInt8], durable: Bool) throws(CKError) {
        let (dir, name) = StoreLayout.split(path)
        let temp = dir + "/" + Self.tempPrefix + name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let fd = try Syscall.open(temp, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644).orThrow(.internalError, "cannot create \(temp)")
        var ok = false
        defer {
            if !ok { _ = Syscall.unlink(temp) }
        }
        do {
            defer { Syscall.close(fd) }
            try io.write(fd, bytes, path: temp).orThrow(.internalError, "cannot write \(path)")
            if durable { try io.sync(fd, path: temp, dataOnly: false).orThrow(.internalError, "cannot sync \(path)") }
        }
        try io.rename(temp, path).orThrow(.internalError, "cannot replace \(path)")
        ok = true
        if durable { try syncDirectory(dir) }
    }

    func syncDirectory(_ dir: String) throws(CKError) {
        let fd = try Syscall.open(dir, O_RDONLY | O_DIRECTORY).orThrow(.internalError, "cannot open directory \(dir)")
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
