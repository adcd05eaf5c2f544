import CloudStore
import Glibc

/// A failed file system call: the errno the kernel gets, and why (for the log).
public struct FSError: Error, Sendable, CustomStringConvertible {
    public var errno: Int32
    public var reason: String

    public init(_ errno: Int32, _ reason: String = "") {
        self.errno = errno
        self.reason = reason
    }

    public var description: String { "\(Syscall.errorText(errno)): \(reason)" }
}

/// Who is calling, from the kernel's request.
public struct CallerContext: Sendable {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32

    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }
}

/// What `stat` shows of a node.
public struct NodeAttributes: Sendable, Equatable {
    public enum Kind: Sendable { case directory, file }
    public var inode: UInt64
    public var kind: Kind
    /// Permission bits only (0o7777).
    public var permissions: UInt32
    public var links: UInt32
    public var uid: UInt32
    public var gid: UInt32
    public var size: Int64
    /// Milliseconds since 1970.
    public var modified: Int64
    public var changed: Int64
    public var accessed: Int64
    /// How long the kernel may keep these attributes.
    public var cacheSeconds: Double = 30
}

/// A name the kernel may cache, with how long.
public struct NodeEntry: Sendable {
    public var attributes: NodeAttributes
    public var entryTimeout: Double
    public var attributeTimeout: Double
}

/// One line of a directory listing.
public struct DirectoryEntry: Sendable {
    public var name: String
    public var attributes: NodeAttributes
    /// How long the kernel may keep the name (readdirplus).
    public var entryTimeout: Double
    /// What the entry's inode stands for, so a readdirplus reply can bind it again: the
    /// view's own node, which this layer only hands back.
    var node: any Sendable
    /// The directory offset that reads on after this entry.
    public var offset = 0
}

/// What an open returns to the kernel.
public struct OpenReply: Sendable {
    public var handle: UInt64
    /// The kernel may keep the pages it has: the content did not change since it read them.
    public var keepCache: Bool
    public var directIO: Bool = false
    /// A read-only open has nothing to save: the kernel need not send a flush on close.
    public var noFlush: Bool = false
    /// A directory whose listing the kernel may keep (FOPEN_CACHE_DIR); with `keepCache`
    /// it lists from what it kept, without a READDIR.
    public var cacheDirectory: Bool = false
}

/// The attributes a `setattr` call wants changed.
public struct AttributeChanges: Sendable {
    public var permissions: UInt32?
    public var uid: UInt32?
    public var gid: UInt32?
    public var size: Int64?
    /// Who truncates: the caller's descriptor table as the kernel names it (its lock owner),
    /// 0 when the kernel does not say.
    public var sizeOwner: UInt64 = 0
    public var accessed: Int64?
    public var modified: Int64?

    public init() {}
}

/// What `statfs` (and so `df`) shows: the quota as the disk.
public struct FileSystemStatistics: Sendable {
    public var blockSize: UInt64
    public var blocks: UInt64
    public var freeBlocks: UInt64
    public var files: UInt64
    public var freeFiles: UInt64
    public var nameMax: UInt64
}

/// Calls the view makes into the kernel: drop what the kernel caches of a node or a name.
public protocol KernelNotifier: AnyObject, Sendable {
    /// Drops what the kernel keeps of `inode`: its attributes, and its pages where no open
    /// decides about them (a mount whose files the kernel opens itself); on its own thread.
    func invalidateNode(_ inode: UInt64)
    /// Drops the kernel's name `name` in `parent`; on its own thread, since the kernel takes
    /// the folder's lock for it, which a request in flight there may hold.
    func invalidateEntry(parent: UInt64, name: String)
    /// Drops the kernel's attributes of `inode` (its size among them) before returning, so a
    /// request may call it before it answers. It takes no lock a request holds and waits for
    /// nothing: pages are not touched.
    func invalidateAttributesNow(_ inode: UInt64)
    /// The calling request is about to wait (a save's `fdatasync` and locks, a zone's first
    /// load): the kernel layer goes on reading requests on another thread meanwhile.
    func willWait()
}

extension KernelNotifier {
    public func willWait() {}
}

/// The operations the kernel layer forwards; names and inodes only, never a `fuse_req_t`.
public protocol FileSystemOperations: AnyObject, Sendable {
    func lookup(parent: UInt64, name: String, caller: CallerContext) throws(FSError) -> NodeEntry
    func forget(_ inode: UInt64, count: UInt64)
    /// The kernel took a lookup of an entry through readdirplus.
    func noteLookup(_ entry: DirectoryEntry)
    func attributes(of inode: UInt64, caller: CallerContext) throws(FSError) -> NodeAttributes
    func setAttributes(of inode: UInt64, _ changes: AttributeChanges, handle: UInt64?, caller: CallerContext) throws(FSError) -> NodeAttributes
    func openDirectory(_ inode: UInt64, caller: CallerContext) throws(FSError) -> OpenReply
    /// Entries from directory offset `offset` on; at most `count`, more than the reply can hold
    /// is wasted work.
    func readDirectory(handle: UInt64, from offset: Int, atMost count: Int) throws(FSError) -> [DirectoryEntry]
    func releaseDirectory(handle: UInt64)
    func open(_ inode: UInt64, flags: Int32, caller: CallerContext) throws(FSError) -> OpenReply
    func create(parent: UInt64, name: String, permissions: UInt32, flags: Int32, caller: CallerContext) throws(FSError) -> (NodeEntry, OpenReply)
    func read(handle: UInt64, count: Int, offset: Int64) throws(FSError) -> [UInt8]
    /// A read of a file the kernel opened without asking (fh 0); see ``FuseSession``.
    func read(inode: UInt64, count: Int, offset: Int64) throws(FSError) -> [UInt8]
    /// `owner` is the writer's descriptor table as the kernel names it (its lock owner), 0 when
    /// the kernel does not say.
    func write(handle: UInt64, bytes: UnsafeRawBufferPointer, offset: Int64, owner: UInt64) throws(FSError) -> Int
    /// A `close` of a descriptor of the open file, by the descriptor table `owner` (the
    /// kernel's lock owner; a forked child's copy of a descriptor is another owner's).
    func flush(handle: UInt64, owner: UInt64, caller: CallerContext) throws(FSError)
    func fsync(handle: UInt64, caller: CallerContext) throws(FSError)
    func release(handle: UInt64)
    func unlink(parent: UInt64, name: String, caller: CallerContext) throws(FSError)
    func makeDirectory(parent: UInt64, name: String, caller: CallerContext) throws(FSError) -> NodeEntry
    func removeDirectory(parent: UInt64, name: String, caller: CallerContext) throws(FSError)
    func rename(parent: UInt64, name: String, newParent: UInt64, newName: String, flags: UInt32, caller: CallerContext) throws(FSError)
    func statistics(caller: CallerContext) -> FileSystemStatistics
}
