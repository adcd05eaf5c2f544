import Foundation

/// What the view remembers of inodes only to answer the kernel faster: the size the kernel
/// was last told of each item file, and the text of a file being read in pieces with no open
/// file. Both are bounded and may be dropped at any time: a size not kept costs the next open
/// an attribute invalidation, a text not kept one more render.
final class InodeHints: @unchecked Sendable {
    /// Sizes kept for at most this many files: the kernel may hold millions.
    static let sizesKept = 65_536
    /// Bytes of unopened reads kept in all, past which they are dropped together.
    static let unopenedReadBytesKept = 64 << 20

    /// Guards every `var` below; a leaf of the daemon's lock order
    /// (docs/Durability.md#the-mount-daemons).
    private let lock = NSLock()
    private var reportedSize: [UInt64: Int64] = [:]
    private var unopenedReads: [UInt64: [UInt8]] = [:]
    private var unopenedReadBytes = 0

    // MARK: Sizes told to the kernel

    /// The kernel was told `size` for `inode`.
    func told(_ inode: UInt64, size: Int64) {
        lock.withLock {
            if reportedSize.count >= Self.sizesKept, reportedSize[inode] == nil { reportedSize = [:] }
            reportedSize[inode] = size
        }
    }

    /// Whether the kernel's size of `inode` is known to be `size`.
    func kernelHas(_ inode: UInt64, size: Int64) -> Bool {
        lock.withLock { reportedSize[inode] == size }
    }

    /// The kernel's size of `inode` is unknown from now on: a writer may change it, or the
    /// kernel forgot the inode.
    func forgetSize(_ inode: UInt64) {
        _ = lock.withLock { reportedSize.removeValue(forKey: inode) }
    }

    // MARK: Reads with no open file

    /// The text a read of `inode` with no open file began with, while it goes on.
    func unopenedRead(_ inode: UInt64) -> [UInt8]? {
        lock.withLock { unopenedReads[inode] }
    }

    /// A read of `bytes` from `inode` with no open file reached `end`: the text is kept for the
    /// next piece while the read began at 0 and has not reached the end, and dropped once it has.
    func read(_ inode: UInt64, bytes: [UInt8], offset: Int64, end: Int) {
        lock.withLock {
            if end >= bytes.count {
                if let old = unopenedReads.removeValue(forKey: inode) { unopenedReadBytes -= old.count }
            } else if offset == 0 {
                if unopenedReadBytes > Self.unopenedReadBytesKept { unopenedReads = [:]; unopenedReadBytes = 0 }
                if let old = unopenedReads.updateValue(bytes, forKey: inode) { unopenedReadBytes -= old.count }
                unopenedReadBytes += bytes.count
            }
        }
    }
}
