import Foundation

/// Where a record file's save goes: a record name and type in a zone of a database.
struct RecordTarget: Hashable, Sendable {
    var database: DatabaseKey
    var zone: String
    var type: String
    var name: String

    var key: NodeKey { .record(database, zone: zone, type: type, name: name) }
    var fileName: String { RecordFileName.make(name) }
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
    /// The record this file was renamed from, while that record is hidden for it.
    var origin: RecordTarget?

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
        case directory([DirectoryEntry])
        /// A record file: the text the kernel reads and writes, and whether it was written
        /// since the last save attempt.
        case record(RecordTarget)
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
    /// The change tag of the record whose text `buffer` started as.
    var baseTag: String?
    /// A file created by this open that is no record yet: it exists only while open.
    var isNew: Bool

    init(kind: Kind, inode: UInt64, flags: Int32, caller: CallerContext, buffer: [UInt8] = [], isNew: Bool = false) {
        self.kind = kind
        self.inode = inode
        self.flags = flags
        self.caller = caller
        self.buffer = buffer
        self.isNew = isNew
    }

    var writable: Bool { flags & O_ACCMODE != O_RDONLY }

    var recordTarget: RecordTarget? {
        if case .record(let t) = kind { return t }
        return nil
    }
}
