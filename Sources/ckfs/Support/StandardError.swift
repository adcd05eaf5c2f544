import Glibc

/// Writes to standard error and ignores a failure: the mount daemon's standard error is
/// `mount.log` in the store, and on a full disk Foundation's `FileHandle.write` traps on
/// ENOSPC, which would end the daemon and every client's mount with it.
func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + done, $0.count - done) }
        if n > 0 { done += n } else if n < 0 && errno == EINTR { continue } else { return }
    }
}
