#if canImport(Glibc)
#endif

/// Room kept on the store's disk for deletes: a file of ``size`` bytes at the store's root,
/// given up when a delete finds the disk full, so that the delete's log entry fits and its
/// record files can go, which frees the space a person needs. It is made again when a store
/// is opened with room on its disk.
enum SpaceReserve {
    static let fileName = "space-reserve"
    static let size = 256 << 10

    static func path(_ layout: StoreLayout) -> String { layout.root + "/" + fileName }

    /// Makes the reserve if it is not there whole; a failure (no room, a read-only store)
    /// leaves none, silently: the store works without it.
    static func ensure(_ layout: StoreLayout) {
        let file = path(layout)
        if case .success(let st?) = Syscall.stat(file), st.size == Int64(size) { return }
        guard case .success(let fd) = Syscall.open(file, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_TRUNC) else { return }
        defer { Syscall.close(fd) }
        let zeros = [UInt8](repeating: 0, count: size)
        let written = zeros.withUnsafeBytes { Syscall.writeAll(fd, $0, path: file) }
        if case .failure = written { _ = Syscall.unlink(file) }
    }

    /// Gives the reserve up; true when there was one to give.
    static func release(_ layout: StoreLayout) -> Bool {
        if case .success = Syscall.unlink(path(layout)) { return true }
        return false
    }
}
