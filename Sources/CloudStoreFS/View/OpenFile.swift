import CloudStore
import Foundation

/// Where a record file's save goes: a record name and type in a zone of a database.
struct RecordTarget: Hashable, Sendable {
    var database: DatabaseKey
    var zone: String
    var type: String
    var name: String

    var key: NodeKey { .record(database, zone: zone, type: type, name: name) }
    var fileName: String { ItemFileName.record.make(name) }
    var ref: RecordRef { RecordRef(database: database, zone: zone, name: name) }
}

/// A file that stands for a stored item: a record, or a key-value entry. Editors, `sed -i`,
/// `cp`, `mv` and `rm` treat both alike, so the view's file handling works on this.
enum ItemTarget: Hashable, Sendable {
    case record(RecordTarget)
    case keyValue(KeyValueRef, key: String)

    var key: NodeKey {
        switch self {
        case .record(let t): t.key
        case .keyValue(let ref, let key): .keyValueEntry(ref, key: key)
        }
    }

    var fileName: String {
        switch self {
        case .record(let t): t.fileName
        case .keyValue(_, let key): ItemFileName.keyValue.make(key)
        }
    }

    /// The folder the file shows in.
    var folder: NodeKey {
        switch self {
        case .record(let t): .recordType(t.database, zone: t.zone, type: t.type)
        case .keyValue(let ref, _): .keyValueFolder(ref)
        }
    }

    var record: RecordTarget? {
        if case .record(let t) = self { return t }
        return nil
    }

    /// The item a node stands for; nil for folders and scratch files.
    init?(_ node: NodeKey) {
        switch node {
        case .record(let d, let zone, let type, let name): self = .record(RecordTarget(database: d, zone: zone, type: type, name: name))
        case .keyValueEntry(let ref, let key): self = .keyValue(ref, key: key)
        default: return nil
        }
    }

    /// The item `fileName` in `folder` would be; nil for a name that is a scratch file there.
    init?(folder: NodeKey, fileName: String) {
        switch folder {
        case .recordType(let d, let zone, let type):
            guard let name = ItemFileName.record.name(fileName) else { return nil }
            self = .record(RecordTarget(database: d, zone: zone, type: type, name: name))
        case .keyValueFolder(let ref):
            guard let key = ItemFileName.keyValue.name(fileName) else { return nil }
            self = .keyValue(ref, key: key)
        default:
            return nil
        }
    }
}

/// An editor's or tool's temporary file: real bytes kept in memory by the daemon, never a
/// record. A record renamed to a scratch name keeps its `origin`, so the record is deleted
/// only once it is clear it is gone (its scratch copy removed), never on the rename.
final class ScratchFile: @unchecked Sendable {
    /// Guards every `var` below.
    let lock = NSLock()
    let id: UInt64
    var bytes: [UInt8] = []
    var permissions: UInt32
    var uid: UInt32
    var gid: UInt32
    var modified: Int64
    var changed: Int64
    /// The item this file was renamed from, while that item is hidden for it.
    var origin: ItemTarget?
    /// The bytes counted for this file in the view's scratch usage. Guarded by the
    /// ``ScratchSpace``'s lock, not by `lock`.
    var accounted = 0

    init(id: UInt64, permissions: UInt32, uid: UInt32, gid: UInt32, now: Int64) {
        self.id = id
        self.permissions = permissions
        self.uid = uid
        self.gid = gid
        self.modified = now
        self.changed = now
    }
}

/// One open file or directory.
final class OpenFile: @unchecked Sendable {
    enum Kind {
        /// A directory; its entries are in `listing`, read at the first READDIR.
        case directory
        /// A record or key-value file: its text is the handle's buffer, saved when dirty.
        case item(ItemTarget)
        case scratch(ScratchFile)
        case lostFound(path: String)
    }

    /// Guards every `var` below.
    let lock = NSLock()
    let kind: Kind
    let inode: UInt64
    let flags: Int32
    let caller: CallerContext
    var buffer: [UInt8]
    var dirty = false
    /// The descriptor tables (the kernel's lock owners) that changed `buffer` since it was last
    /// saved; 0 stands for a change whose owner the kernel does not say (a truncation).
    var changedBy: Set<UInt64> = []
    /// A record reader whose `buffer` is read at its first READ: the kernel's pages held its
    /// version at the open, so it may never ask (``StoreView`` `openRecordReader`).
    var textToLoad = false
    /// A file created by this open that is no item yet: it exists only while open.
    var isNew: Bool
    /// A directory's entries, listed at the first read and then served from here.
    var listing: DirectoryListing?
    /// How an item handle reads and writes (``ItemCacheTable``); set once, at the open.
    var cacheMode: ItemCacheTable.Mode = .direct

    init(kind: Kind, inode: UInt64, flags: Int32, caller: CallerContext, buffer: [UInt8] = [], isNew: Bool = false) {
        self.kind = kind
        self.inode = inode
        self.flags = flags
        self.caller = caller
        self.buffer = buffer
        self.isNew = isNew
    }

    var writable: Bool { flags & Posix.O_ACCMODE != Posix.O_RDONLY }

    /// Whether a close by `owner` is the close of a writer of the unsaved text, which saves it
    /// and hears how the save went. A descriptor copied into a forked child (and closed when it
    /// execs or exits) is another owner's: its close must not take the save, whose refusal
    /// its process never reads, from the writer's own close. Handle lock held.
    func closeSaves(owner: UInt64) -> Bool {
        changedBy.isEmpty || changedBy.contains(0) || owner == 0 || changedBy.contains(owner)
    }

    /// The text changed, by the descriptor table `owner` (0: unknown). Handle lock held.
    func changed(by owner: UInt64) {
        dirty = true
        changedBy.insert(owner)
    }

    var itemTarget: ItemTarget? {
        if case .item(let t) = kind { return t }
        return nil
    }
}
