import CCloudStoreShims

/// Process-wide settings for long-running processes such as the mount daemon.
package enum ProcessTuning {
    /// Caps the C library's malloc arenas at `count` (glibc; elsewhere nothing happens).
    /// glibc gives a thread that allocates while another holds its arena a new one, up to 8
    /// per core, and each arena keeps what its threads freed.
    public static func limitMallocArenas(to count: Int) {
        _ = CCloudStoreShims_limitMallocArenas(Int32(count))
    }

    /// Gives memory the process freed back to the system (glibc; elsewhere nothing happens),
    /// after work that needed much of it for a while, such as making a zone's index: glibc
    /// otherwise keeps it, and a daemon's size would stay at its largest moment.
    public static func releaseFreedMemory() {
        _ = CCloudStoreShims_releaseFreedMemory()
    }
}
