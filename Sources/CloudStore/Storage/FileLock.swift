#if canImport(Glibc)
#endif

/// Runs `body` holding an exclusive `flock` on `path` (created if missing). For rarely
/// written shared files (container.json, schema.json); zones have their own lock.
func withFileLock<T>(_ path: String, _ body: () throws(CKError) -> T) throws(CKError) -> T {
    let fd = try Syscall.open(path, Posix.O_RDWR | Posix.O_CREAT).orThrow(.internalError, "cannot open lock \(path)")
    defer { Syscall.close(fd) }
    try Syscall.flock(fd, Posix.LOCK_EX, path: path).orThrow(.internalError, "cannot lock \(path)")
    defer { _ = Syscall.flock(fd, Posix.LOCK_UN, path: path) }
    return try body()
}
