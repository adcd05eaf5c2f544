import Foundation

/// Inode numbers for nodes, with the kernel's lookup counts (as libfuse's passthrough_hp
/// keeps them). A number stays bound to its node while the kernel holds a lookup of it, so
/// a cached inode never comes to mean another node.
///
/// Its lock is a leaf (docs/Durability.md#the-mount-daemons): nothing is called while it is held.
final class InodeTable: @unchecked Sendable {
    static let rootInode: UInt64 = 1

    /// Guards every `var` below.
    private let lock = NSLock()
    private var byKey: [NodeKey: UInt64] = [.root: InodeTable.rootInode]
    private var byInode: [UInt64: (key: NodeKey, lookups: UInt64)] = [InodeTable.rootInode: (.root, 1)]
    private var next: UInt64 = 2

    /// The inode of `key`, numbering it on first use.
    func inode(for key: NodeKey) -> UInt64 {
        lock.withLock {
            if let ino = byKey[key] { return ino }
            let ino = next
            next += 1
            byKey[key] = ino
            byInode[ino] = (key, 0)
            return ino
        }
    }

    /// The inode of `key` if it has one.
    func existingInode(for key: NodeKey) -> UInt64? { lock.withLock { byKey[key] } }

    func key(of inode: UInt64) -> NodeKey? { lock.withLock { byInode[inode]?.key } }

    /// The kernel took one more lookup of `inode` (a lookup, create, mkdir or readdirplus
    /// reply). The number was given out for `key` before this call; if the kernel forgot it
    /// in between, it is bound again, since the kernel is about to hold it.
    func lookedUp(_ inode: UInt64, key: NodeKey) {
        lock.withLock {
            if byInode[inode] != nil {
                byInode[inode]!.lookups += 1
            } else {
                byInode[inode] = (key, 1)
                if byKey[key] == nil { byKey[key] = inode }
            }
        }
    }

    /// After a rename the kernel's name for the moved file leads to the moved file's inode:
    /// that inode now means `to` (the item saved under the new name), as a file system's
    /// inode follows its file. An inode `to` had before stays bound to it until forgotten,
    /// but no longer answers for `to`. Returns the moved inode, if the kernel has one.
    func rebind(_ from: NodeKey, to: NodeKey) -> UInt64? {
        lock.withLock {
            guard let ino = byKey[from], let e = byInode[ino] else { return nil }
            byKey[from] = nil
            byInode[ino] = (to, e.lookups)
            byKey[to] = ino
            return ino
        }
    }

    /// The kernel dropped `count` lookups; an inode no one holds is unbound.
    func forget(_ inode: UInt64, count: UInt64) {
        lock.withLock {
            guard inode != Self.rootInode, var e = byInode[inode] else { return }
            e.lookups = e.lookups > count ? e.lookups - count : 0
            if e.lookups == 0 {
                byInode[inode] = nil
                if byKey[e.key] == inode { byKey[e.key] = nil }
            } else {
                byInode[inode] = e
            }
        }
    }

    /// Inodes whose keys match, for invalidating a whole zone.
    func inodes(where match: (NodeKey) -> Bool) -> [(NodeKey, UInt64)] {
        lock.withLock { byKey.filter { match($0.key) }.map { ($0.key, $0.value) } }
    }
}
