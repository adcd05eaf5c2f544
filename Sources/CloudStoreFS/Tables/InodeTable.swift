import Foundation

/// Inode numbers for nodes, with the kernel's lookup counts (as libfuse's passthrough_hp
/// keeps them). A number stays bound to its node while the kernel holds a lookup of it, so
/// a cached inode never comes to mean another node.
///
/// The kernel holds an inode for every file it has seen (a listing of a million records is
/// a million), so a record's binding is kept small: its folder as a number into a table of
/// folders, its name, its count, 32 bytes a binding. A record's number is a hash of its
/// folder and name, so no table from node to number is kept for records: a node is looked
/// up by computing its number and checking the binding there. The rare record whose hashed
/// number another node holds (a collision, or a rename that moved an inode onto it) is
/// bound explicitly (`assigned`), and that binding is asked first. Other nodes (folders,
/// scratch files, lost+found) are few and keep a plain table, numbered from 2 up; hashed
/// numbers have the top bit set, so a new number of one kind is never one of the other (a
/// rename may move a number to a node of the other kind, and a hashed number is given out
/// only when neither table holds it).
///
/// Its lock is a leaf (docs/Durability.md#the-mount-daemons): nothing is called while it is held.
final class InodeTable: @unchecked Sendable {
    static let rootInode: UInt64 = 1

    /// A record node in few bytes: its type folder's number in `folders` (the part of a
    /// record's node all its folder's records share), and its name.
    struct RecordSlot: Hashable {
        var folder: UInt32
        var name: String
    }

    /// A record inode's binding. The count saturates at `UInt32.max` (four billion lookups
    /// of one file with no forget in between): the inode then stays bound until unmount.
    private struct RecordBinding {
        var name: String
        var folder: UInt32
        var lookups: UInt32
    }

    /// The number a record would get; a hash with the top bit set. Replaceable in tests, to
    /// make collisions happen.
    private let number: @Sendable (RecordSlot) -> UInt64

    /// Guards every `var` below.
    private let lock = NSLock()
    private var folderNumbers: [RecordFolder: UInt32] = [:]
    private var folders: [RecordFolder] = []
    private var records: [UInt64: RecordBinding] = [:]
    /// Records bound to a number other than their hash.
    private var assigned: [RecordSlot: UInt64] = [:]
    private var byKey: [NodeKey: UInt64] = [.root: InodeTable.rootInode]
    private var byInode: [UInt64: (key: NodeKey, lookups: UInt64)] = [InodeTable.rootInode: (.root, 1)]
    private var next: UInt64 = 2

    init(number: @escaping @Sendable (RecordSlot) -> UInt64 = InodeTable.hashedNumber) {
        self.number = number
    }

    static func hashedNumber(_ slot: RecordSlot) -> UInt64 {
        var h = Hasher()
        h.combine(slot)
        return UInt64(UInt(bitPattern: h.finalize())) | (1 << 63)
    }

    /// The inode of `key`, numbering it on first use. A record's number is bound only once
    /// the kernel takes a lookup of it (``lookedUp(_:key:)``): a listing the kernel reads
    /// without lookups leaves nothing behind.
    func inode(for key: NodeKey) -> UInt64 {
        lock.withLock {
            if let slot = recordSlot(key, adding: true) {
                if let ino = boundNumber(slot) { return ino }
                let hashed = number(slot)
                if records[hashed] == nil, byInode[hashed] == nil { return hashed }
                let ino = take()
                assigned[slot] = ino
                return ino
            }
            if let ino = byKey[key] { return ino }
            let ino = take()
            byKey[key] = ino
            byInode[ino] = (key, 0)
            return ino
        }
    }

    /// The inode of `key` if it has one.
    func existingInode(for key: NodeKey) -> UInt64? {
        lock.withLock {
            if let slot = recordSlot(key, adding: false) { return boundNumber(slot) }
            if case .record = key { return nil }
            return byKey[key]
        }
    }

    /// Whether `inode` is bound to a node (cheaper than ``key(of:)``, which makes the key).
    func isBound(_ inode: UInt64) -> Bool { lock.withLock { records[inode] != nil || byInode[inode] != nil } }

    func key(of inode: UInt64) -> NodeKey? {
        lock.withLock {
            if let r = records[inode] { return nodeKey(RecordSlot(folder: r.folder, name: r.name)) }
            return byInode[inode]?.key
        }
    }

    /// The kernel took one more lookup of `inode` (a lookup, create, mkdir or readdirplus
    /// reply). The number was given out for `key` before this call; if the kernel forgot it
    /// in between, it is bound again, since the kernel is about to hold it. (A hashed number
    /// given out unbound and bound to another record before this call would need two records
    /// whose 63-bit hashes collide, asked for at the same moment; it is not guarded against.)
    func lookedUp(_ inode: UInt64, key: NodeKey) {
        lock.withLock {
            if records[inode] != nil {
                if records[inode]!.lookups < UInt32.max { records[inode]!.lookups += 1 }
            } else if byInode[inode] != nil {
                byInode[inode]!.lookups += 1
            } else if let slot = recordSlot(key, adding: true) {
                records[inode] = RecordBinding(name: slot.name, folder: slot.folder, lookups: 1)
                if inode != number(slot), assigned[slot] == nil { assigned[slot] = inode }
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
            let ino: UInt64
            let lookups: UInt64
            if let slot = recordSlot(from, adding: false) {
                guard let bound = boundNumber(slot), let r = records[bound] else { return nil }
                (ino, lookups) = (bound, UInt64(r.lookups))
                records[ino] = nil
                if assigned[slot] == ino { assigned[slot] = nil }
            } else {
                guard let bound = byKey[from], let e = byInode[bound] else { return nil }
                (ino, lookups) = (bound, e.lookups)
                byKey[from] = nil
                byInode[ino] = nil
            }
            if let slot = recordSlot(to, adding: true) {
                records[ino] = RecordBinding(name: slot.name, folder: slot.folder, lookups: UInt32(clamping: lookups))
                assigned[slot] = ino
            } else {
                byInode[ino] = (to, lookups)
                byKey[to] = ino
            }
            return ino
        }
    }

    /// The kernel dropped `count` lookups; an inode no one holds is unbound.
    func forget(_ inode: UInt64, count: UInt64) {
        lock.withLock {
            guard inode != Self.rootInode else { return }
            if var r = records[inode] {
                if r.lookups == UInt32.max { return }
                r.lookups = UInt64(r.lookups) > count ? r.lookups - UInt32(count) : 0
                if r.lookups == 0 {
                    records[inode] = nil
                    let slot = RecordSlot(folder: r.folder, name: r.name)
                    if assigned[slot] == inode { assigned[slot] = nil }
                } else {
                    records[inode] = r
                }
                return
            }
            guard var e = byInode[inode] else { return }
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
        lock.withLock {
            var out = byKey.filter { match($0.key) }.map { ($0.key, $0.value) }
            for (ino, r) in records {
                let key = nodeKey(RecordSlot(folder: r.folder, name: r.name))
                if match(key) { out.append((key, ino)) }
            }
            return out
        }
    }

    /// Bindings held, for tests: records and other nodes.
    var counts: (records: Int, others: Int) { lock.withLock { (records.count, byInode.count) } }

    // MARK: Lock held

    private func take() -> UInt64 {
        defer { next += 1 }
        return next
    }

    /// The number a record is bound to now: its explicit one, else its hash when bound to it.
    private func boundNumber(_ slot: RecordSlot) -> UInt64? {
        if let ino = assigned[slot] { return ino }
        let hashed = number(slot)
        if let r = records[hashed], r.folder == slot.folder, r.name == slot.name { return hashed }
        return nil
    }

    /// The slot of a record node; nil for other nodes, and for a record in a folder not
    /// numbered yet unless `adding`.
    private func recordSlot(_ key: NodeKey, adding: Bool) -> RecordSlot? {
        guard case .record(let d, let zone, let type, let name) = key else { return nil }
        let folder = RecordFolder(database: d, zone: zone, type: type)
        if let n = folderNumbers[folder] { return RecordSlot(folder: n, name: name) }
        guard adding else { return nil }
        let n = UInt32(folders.count)
        folders.append(folder)
        folderNumbers[folder] = n
        return RecordSlot(folder: n, name: name)
    }

    private func nodeKey(_ slot: RecordSlot) -> NodeKey {
        let f = folders[Int(slot.folder)]
        return .record(f.database, zone: f.zone, type: f.type, name: slot.name)
    }
}
