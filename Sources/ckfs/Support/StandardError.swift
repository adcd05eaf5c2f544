import CloudStore

/// Writes to standard error and ignores a failure: the mount daemon's standard error is
/// `mount.log` in the store, and on a full disk Foundation's `FileHandle.write` traps on
/// ENOSPC, which would end the daemon and every client's mount with it.
func writeToStandardError(_ text: String) {
    _ = Syscall.writeAll(Posix.STDERR_FILENO, Array(text.utf8), path: "standard error")
}
