import CloudStore
import Foundation

extension StoreView {
    /// Long: every change made elsewhere reaches the kernel as an invalidation (ChangeWatcher,
    /// ``invalidate(_:in:_:)``), and each expiry costs a LOOKUP or GETATTR round trip per file
    /// (a warm `ls -l` with short timeouts makes two a record).
    static let entryTimeout = 30.0
    static let attributeTimeout = 30.0
    static let publicRecordAttributeTimeout = 1.0
    static let lostFoundName = "lost+found"
    static let keyValueFolderName = "keyvalue"
    /// Anyone may add public records; who may change or remove one is the engine's
    /// question, asked in open, rename and unlink (``checkMayChange(_:deleting:caller:)``).
    static let publicFolderMode: UInt32 = 0o777

    func key(_ inode: UInt64) throws(FSError) -> NodeKey {
        guard let k = inodes.key(of: inode) else { throw FSError(Posix.ENOENT, "inode \(inode) is not known") }
        return k
    }

    /// Checks a name from the kernel before it is used for anything.
    func checkName(_ name: String) throws(FSError) {
        if name.isEmpty || name == "." || name == ".." || name.contains("/") || name.utf8.contains(0) {
            throw FSError(Posix.EINVAL, "\"\(name)\" is not a file name")
        }
        if name.utf8.count > 255 { throw FSError(Posix.ENAMETOOLONG, "a name may have at most 255 bytes") }
    }

    /// The node `name` names in the directory `parent`, as `caller` sees it.
    func child(of parent: NodeKey, named name: String, caller: CallerContext) throws(FSError) -> NodeKey {
        try checkName(name)
        try checkReaches(parent, caller)
        if let id = scratch.id(in: parent, named: name) { return .scratch(id) }
        switch parent {
        case .root:
            if name == Self.lostFoundName { return .lostFound }
            guard shownContainers().contains(name) else { throw FSError(Posix.ENOENT, "no container \(name)") }
            return .container(name)
        case .lostFound:
            guard lostAndFound.isVisible(name, to: caller.uid) else { throw FSError(Posix.ENOENT) }
            return .lostFoundFile(name)
        case .container(let c):
            switch name {
            case "public": return .database(DatabaseKey(container: c, scope: .public, user: ""))
            case "private": return .database(DatabaseKey(container: c, scope: .private, user: users.userName(caller.uid)))
            case Self.keyValueFolderName: return .keyValueFolder(KeyValueRef(container: c, user: users.userName(caller.uid)))
            case Self.sharedFolderName: return .shared(container: c, user: users.userName(caller.uid))
            default: throw FSError(Posix.ENOENT)
            }
        case .shared(let c, let user):
            guard let d = try sharedOwnerKey(c, user: user, folder: name) else { throw FSError(Posix.ENOENT) }
            return .database(d)
        case .database(let d):
            guard let zone = StoreLayout.decode(name), StoreLayout.encode(zone) == name else { throw FSError(Posix.ENOENT) }
            let db = try database(d, caller: caller)
            guard (try? db.zone(zone)) != nil else { throw FSError(Posix.ENOENT) }
            return .zone(d, zone)
        case .zone(let d, let zone):
            let typeKey = NodeKey.recordType(d, zone: zone, type: name)
            if madeTypeFolders.contains(typeKey) { return typeKey }
            guard try hasRecords(d, zone, type: name) || hasPendingNew(d, zone, type: name) else { throw FSError(Posix.ENOENT) }
            return typeKey
        case .recordType where StoreLayout.isLongRecordFileName(name):
            guard let target = try longRecordTarget(parent, name), !scratch.isHidden(target) else { throw FSError(Posix.ENOENT) }
            return target.key
        case .recordType, .keyValueFolder:
            guard let target = ItemTarget(folder: parent, fileName: name) else { throw FSError(Posix.ENOENT) }
            if case .keyValue(let ref, let key) = target { try checkKey(key, ref: ref) }
            if pendingCreates.contains(target) { return target.key }
            if scratch.isHidden(target) { throw FSError(Posix.ENOENT) }
            guard try exists(target) else { throw FSError(Posix.ENOENT) }
            return target.key
        case .lostFoundFile, .record, .keyValueEntry, .scratch:
            throw FSError(Posix.ENOTDIR)
        }
    }

    /// The record in type folder `folder` whose name is too long to spell in its file name and
    /// whose file name is `fileName` (``StoreLayout/recordFileName(_:)``), if there is one.
    func longRecordTarget(_ folder: NodeKey, _ fileName: String) throws(FSError) -> ItemTarget? {
        guard case .recordType(let d, let zone, let type) = folder, StoreLayout.isLongRecordFileName(fileName),
              let name = try recordNames(d, zone, type: type).first(where: { StoreLayout.recordFileName($0) == fileName }) else { return nil }
        return .record(RecordTarget(database: d, zone: zone, type: type, name: name))
    }

    func hasPendingNew(_ d: DatabaseKey, _ zone: String, type: String) -> Bool {
        pendingCreates.hasTarget(in: .recordType(d, zone: zone, type: type))
    }

    /// What `stat` shows for a node; ENOENT when it is gone.
    func attributes(_ key: NodeKey, inode: UInt64, caller: CallerContext) throws(FSError) -> NodeAttributes {
        func dir(_ perms: UInt32, uid: UInt32, time: Int64? = nil) -> NodeAttributes {
            NodeAttributes(inode: inode, kind: .directory, permissions: perms, links: 1, uid: uid, gid: uid == daemonUID ? daemonGID : uid,
                           size: 4096, modified: time ?? started, changed: time ?? started, accessed: time ?? started)
        }
        switch key {
        case .root, .container:
            return dir(0o755, uid: daemonUID)
        case .lostFound:
            return dir(0o1777, uid: daemonUID)
        case .shared(_, let user):
            return dir(0o500, uid: users.uid(ofUserNamed: user) ?? daemonUID)
        case .database(let d):
            return dir(d.scope == .public ? Self.publicFolderMode : d.scope == .shared ? Self.sharedOwnerFolderMode : 0o700, uid: owner(d))
        case .recordType(let d, let zone, _):
            return dir(try folderMode(d, zone), uid: owner(d))
        case .keyValueFolder(let ref):
            return dir(0o700, uid: users.uid(ofUserNamed: ref.user) ?? daemonUID)
        case .zone(let d, let zone):
            guard let created = (try? database(d, caller: caller).zone(zone))?.created else { throw FSError(Posix.ENOENT) }
            return dir(try folderMode(d, zone), uid: owner(d), time: created)
        case .record, .keyValueEntry:
            let target = ItemTarget(key)!
            if let pending = pendingCreates.handle(for: target) {
                let size = pending.lock.withLock { pending.buffer.count }
                let isPublic = target.record?.database.scope == .public
                return NodeAttributes(inode: inode, kind: .file, permissions: isPublic ? 0o644 : 0o600,
                                      links: 1, uid: pending.caller.uid, gid: pending.caller.gid, size: Int64(size),
                                      modified: started, changed: started, accessed: started)
            }
            guard let attributes = try itemAttributes(target, inode: inode) else { throw FSError(Posix.ENOENT) }
            return attributes
        case .scratch(let id):
            guard let s = scratch.file(id) else { throw FSError(Posix.ENOENT) }
            return s.lock.withLock {
                NodeAttributes(inode: inode, kind: .file, permissions: s.permissions, links: 1, uid: s.uid, gid: s.gid,
                               size: Int64(s.bytes.count), modified: s.modified, changed: s.changed, accessed: s.modified)
            }
        case .lostFoundFile(let name):
            guard case .success(let st?) = Syscall.stat(lostAndFound.directory + "/" + name, times: true) else { throw FSError(Posix.ENOENT) }
            return NodeAttributes(inode: inode, kind: .file, permissions: st.permissions & 0o777, links: 1,
                                  uid: st.owner, gid: st.group, size: st.size, modified: st.modified, changed: st.modified, accessed: st.modified)
        }
    }

    /// The mode of a zone's folders: anyone's in the public database, the owner's alone in a
    /// private one, and in a shared one what the shares let the caller do.
    func folderMode(_ d: DatabaseKey, _ zone: String) throws(FSError) -> UInt32 {
        switch d.scope {
        case .public: Self.publicFolderMode
        case .private: 0o700
        case .shared: try sharedFolderMode(d, zone)
        }
    }

    func attributes(of record: RecordStat, _ target: RecordTarget, inode: UInt64) -> NodeAttributes {
        let (size, modified) = shownVersion(inode, size: Int64(record.size), modified: record.modified ?? started)
        let owner: UInt32 = target.database.scope == .public
            ? users.uid(ofCreator: record.creator, container: target.database.container)
            : owner(target.database)
        // A type with write roles is writable by all as far as the kernel is concerned: the
        // roles are the engine's to check. Asked only for public records: opening the
        // container for every record was a fifth of a listing's time. A shared record is the
        // sharer's, writable by the caller where a share lets them change it.
        let permissions: UInt32 = switch target.database.scope {
        case .private: 0o600
        case .shared: sharedPermission(target) == .readWrite && record.type != ShareInfo.recordType ? 0o666 : 0o644
        case .public: (try? store.container(target.database.container).hasWriteRoles(for: target.type)) == true ? 0o666 : 0o644
        }
        // A public record's mode follows the roles in container.json, which no invalidation
        // follows: the kernel keeps it only briefly.
        return NodeAttributes(inode: inode, kind: .file, permissions: permissions,
                              links: 1, uid: owner, gid: owner == daemonUID ? daemonGID : owner, size: size,
                              modified: modified, changed: modified, accessed: modified,
                              cacheSeconds: target.database.scope == .public ? Self.publicRecordAttributeTimeout : Self.attributeTimeout)
    }

    func entry(_ key: NodeKey, caller: CallerContext) throws(FSError) -> NodeEntry {
        let ino = inodes.inode(for: key)
        let attrs = try attributes(key, inode: ino, caller: caller)
        inodes.lookedUp(ino, key: key)
        return NodeEntry(attributes: attrs, entryTimeout: entryTimeout(key), attributeTimeout: attrs.cacheSeconds)
    }

    /// `private` and `keyvalue` mean another database and store for each caller: in a mount
    /// several users reach (`--allow-other`) the kernel must never keep those names. A mount
    /// only its owner reaches keeps them like any other.
    func entryTimeout(_ key: NodeKey) -> Double {
        if sharedByUsers, case .database(let d) = key, d.scope == .private { return 0 }
        if sharedByUsers, case .keyValueFolder = key { return 0 }
        if sharedByUsers, case .shared = key { return 0 }
        // Each caller sees only their own lost+found entries.
        if sharedByUsers, case .lostFoundFile = key { return 0 }
        return Self.entryTimeout
    }

    // MARK: FileSystemOperations: names and attributes

    public func lookup(parent: UInt64, name: String, caller: CallerContext) throws(FSError) -> NodeEntry {
        try entry(try child(of: try key(parent), named: name, caller: caller), caller: caller)
    }

    public func forget(_ inode: UInt64, count: UInt64) {
        inodes.forget(inode, count: count)
        if !inodes.isBound(inode) {
            itemCache.inodeForgotten(inode)
            hints.forgetSize(inode)
        }
    }

    /// The size and modification time the kernel is told of an item file whose current version
    /// has `size` and `modified`, the size noted (``InodeHints``): while cached readers of an
    /// older version are open, theirs (``ItemCacheTable/shown(_:size:modified:tell:)``).
    func shownVersion(_ inode: UInt64, size: Int64, modified: Int64) -> (size: Int64, modified: Int64) {
        itemCache.shown(inode, size: size, modified: modified) { hints.told(inode, size: $0) }
    }

    public func noteLookup(_ entry: DirectoryEntry) {
        guard let key = entry.node as? NodeKey else { return }
        inodes.lookedUp(entry.attributes.inode, key: key)
    }

    public func attributes(of inode: UInt64, caller: CallerContext) throws(FSError) -> NodeAttributes {
        try attributes(try key(inode), inode: inode, caller: caller)
    }

    public func setAttributes(of inode: UInt64, _ changes: AttributeChanges, handle: UInt64?, caller: CallerContext) throws(FSError) -> NodeAttributes {
        let key = try key(inode)
        if let size = changes.size {
            try truncate(key, inode: inode, to: size, handle: handle, owner: changes.sizeOwner, caller: caller)
        }
        if case .scratch(let id) = key, let s = scratch.file(id) {
            s.lock.withLock {
                if let p = changes.permissions { s.permissions = p }
                if let u = changes.uid { s.uid = u }
                if let g = changes.gid { s.gid = g }
                if let m = changes.modified { s.modified = m }
                s.changed = Store.now()
            }
        }
        // chmod, chown and utimens on records and folders are accepted and change nothing:
        // their mode, owner and times follow from the store, and tools like
        // vim, tar and rsync set them after writing.
        return try attributes(key, inode: inode, caller: caller)
    }

    // MARK: Directories

    /// Opens a directory; its entries are listed at the first read. A type folder's listing
    /// may stay in the kernel (FOPEN_CACHE_DIR): it is kept when the zone has not changed
    /// since the kernel read it, checked here as a file's text is at open (close-to-open), so
    /// `ls` or `tar` of a large folder lists it again only after a change. Changes
    /// made through the mount also reset the kernel's copy by themselves (the kernel counts
    /// them on the folder), and one in flight (a file being written, a scratch name) keeps
    /// the folder from being cached at all. Should the kernel's copy be left half filled (an
    /// open that may not keep it drops its pages while another reader fills them), the kernel
    /// lists through the daemon for as long as it keeps the folder's inode (fs/fuse/readdir.c
    /// resets only a finished copy): slower, never stale.
    public func openDirectory(_ inode: UInt64, caller: CallerContext) throws(FSError) -> OpenReply {
        let key = try key(inode)
        guard key.isDirectory else { throw FSError(Posix.ENOTDIR) }
        try checkReaches(key, caller)
        var reply = OpenReply(handle: 0, keepCache: false)
        let h = OpenFile(kind: .directory, inode: inode, flags: Posix.O_RDONLY, caller: caller)
        if case .recordType(let d, let zone, _) = key {
            _ = try catalog(d, zone)
            reply.cacheDirectory = true
            reply.keepCache = generations.servedListingIsCurrent(key, in: ZoneRef(database: d, zone: zone), inFlight: hasEntriesInFlight)
        } else {
            // Small folders are listed now, so a refusal (a private database without an
            // identity) comes at open, where `ls` reports it.
            let listed = try listing(key, caller: caller)
            h.lock.withLock { h.listing = listed }
        }
        reply.handle = handles.add(h)
        return reply
    }

    public func readDirectory(handle: UInt64, from offset: Int, atMost count: Int) throws(FSError) -> [DirectoryEntry] {
        guard let h = handles.get(handle), case .directory = h.kind else { throw FSError(Posix.EBADF) }
        let listed: DirectoryListing
        if let kept = h.lock.withLock({ h.listing }) {
            listed = kept
        } else {
            let key = try key(h.inode)
            // The generation before listing: a change meanwhile makes it stale, never fresh.
            if case .recordType(let d, let zone, _) = key {
                let generation = generations.generation(ZoneRef(database: d, zone: zone))
                listed = try listing(key, caller: h.caller)
                generations.noteServed(key, at: generation, inFlight: hasEntriesInFlight)
            } else {
                listed = try listing(key, caller: h.caller)
            }
            h.lock.withLock { h.listing = listed }
        }
        return try entries(of: listed, from: offset, atMost: count)
    }

    /// At most `count` entries of a listing from position `offset` on, each with the offset
    /// that reads on after it. A record deleted since the listing was read is left out.
    private func entries(of listed: DirectoryListing, from offset: Int, atMost count: Int) throws(FSError) -> [DirectoryEntry] {
        var out: [DirectoryEntry] = []
        var position = max(offset, 0)
        while out.count < count, position < listed.count {
            position += 1
            var entry: DirectoryEntry
            if position <= listed.names.count {
                guard let folder = listed.folder, let found = try recordEntry(folder.target(listed.names[position - 1])) else { continue }
                entry = found
            } else {
                entry = listed.entries[position - 1 - listed.names.count]
            }
            entry.offset = position
            out.append(entry)
        }
        return out
    }

    /// A record's line in its folder's listing; nil when it is gone. One that cannot be read
    /// fails the listing (said in the log): `ls`, `tar` or `rsync` then report the folder,
    /// never finish without the file.
    private func recordEntry(_ target: RecordTarget) throws(FSError) -> DirectoryEntry? {
        let record: RecordStat?
        do { record = try recordStat(target) } catch {
            if error.errno == Posix.ENOENT { return nil }
            logger.error("\(mountPath(.record(target))) cannot be read, so its folder cannot be listed: \(error.reason)")
            throw error
        }
        guard let record else { return nil }
        let ino = inodes.inode(for: target.key)
        return DirectoryEntry(name: target.fileName, attributes: attributes(of: record, target, inode: ino),
                              entryTimeout: Self.entryTimeout, node: target.key)
    }

    /// Whether a type folder lists something that is not a saved record: a file created and
    /// not yet saved, a record hidden behind a scratch name, a scratch file. Such a listing
    /// is never kept: the entry may go with no request the kernel sees (a refused save). The
    /// entry invalidation sent then resets the kernel's copy too, but only when the kernel
    /// still has the name, and a moment later. Asked under the generations' lock.
    private func hasEntriesInFlight(_ folder: NodeKey) -> Bool {
        pendingCreates.hasTarget(in: folder) || scratch.holdsEntriesInFlight(folder)
    }

    public func releaseDirectory(handle: UInt64) { handles.remove(handle) }

    /// A directory's entries: read once per open directory, at the first READDIR of a type
    /// folder and at OPENDIR of any other.
    func listing(_ dir: NodeKey, caller: CallerContext) throws(FSError) -> DirectoryListing {
        var keys: [(String, NodeKey)] = []
        switch dir {
        case .root:
            keys.append((Self.lostFoundName, .lostFound))
            for c in shownContainers() { keys.append((c, .container(c))) }
        case .lostFound:
            for n in lostAndFound.names(visibleTo: caller.uid).sorted() { keys.append((n, .lostFoundFile(n))) }
        case .container(let c):
            keys.append((Self.keyValueFolderName, .keyValueFolder(KeyValueRef(container: c, user: users.userName(caller.uid)))))
            keys.append(("private", .database(DatabaseKey(container: c, scope: .private, user: users.userName(caller.uid)))))
            keys.append(("public", .database(DatabaseKey(container: c, scope: .public, user: ""))))
            keys.append((Self.sharedFolderName, .shared(container: c, user: users.userName(caller.uid))))
        case .shared(let c, let user):
            for (folder, owner) in try sharedOwners(c, user: user) {
                keys.append((folder, .database(DatabaseKey(container: c, scope: .shared, user: user, owner: owner))))
            }
        case .database(let d):
            let zones: [RecordZone]
            let db = try database(d, caller: caller)
            do throws(CKError) { zones = try db.zones() } catch { throw error.fsError }
            for z in zones { keys.append((StoreLayout.encode(z.zoneID.zoneName), .zone(d, z.zoneID.zoneName))) }
        case .zone(let d, let zone):
            var types = Set(try recordTypes(d, zone))
            types.formUnion(madeTypeFolders.types(in: d, zone: zone))
            let pending = pendingCreates.targets { $0.record.map { $0.database == d && $0.zone == zone } ?? false }
            types.formUnion(pending.compactMap(\.record?.type))
            for t in types.sorted() { keys.append((t, .recordType(d, zone: zone, type: t))) }
        case .recordType(let d, let zone, let type):
            let folder = RecordFolder(database: d, zone: zone, type: type)
            var names = try recordNames(d, zone, type: type)
            // Files being created before hidden items: a save unhides its item before it stops
            // being pending, so an item is always seen in one of the two.
            let pending = pendingCreates.targets { $0.record.map { $0.database == d && $0.zone == zone && $0.type == type } ?? false }
                .compactMap(\.record)
            let hiddenNames = Set(scratch.hiddenItems(in: dir).compactMap(\.record?.name))
            if !hiddenNames.isEmpty { names.removeAll { hiddenNames.contains($0) } }
            for t in pending where try storedRecord(d, zone, named: t.name) == nil { keys.append((t.fileName, t.key)) }
            return DirectoryListing(folder: folder, names: names, entries: try entries(keys, caller: caller) + scratchEntries(dir, caller: caller))
        case .keyValueFolder(let ref):
            let snapshot = try keyValues(ref)
            // As above: pending files first, then hidden items.
            let pending = pendingCreates.targets { $0.folder == dir }
            let hiddenKeys = scratch.hiddenItems(in: dir)
            for key in snapshot.entries.keys.sorted() {
                let target = ItemTarget.keyValue(ref, key: key)
                if !hiddenKeys.contains(target) { keys.append((target.fileName, target.key)) }
            }
            for t in pending.sorted(by: { $0.fileName < $1.fileName }) where !keys.contains(where: { $0.1 == t.key }) {
                keys.append((t.fileName, t.key))
            }
        case .lostFoundFile, .record, .keyValueEntry, .scratch:
            throw FSError(Posix.ENOTDIR)
        }
        return DirectoryListing(entries: try entries(keys, caller: caller) + scratchEntries(dir, caller: caller))
    }

    private func entries(_ keys: [(String, NodeKey)], caller: CallerContext) throws(FSError) -> [DirectoryEntry] {
        var out: [DirectoryEntry] = []
        for (name, key) in keys {
            let ino = inodes.inode(for: key)
            if let a = try? attributes(key, inode: ino, caller: caller) { out.append(DirectoryEntry(name: name, attributes: a, entryTimeout: entryTimeout(key), node: key)) }
        }
        return out
    }

    private func scratchEntries(_ dir: NodeKey, caller: CallerContext) -> [DirectoryEntry] {
        let names = scratch.names(in: dir)
        return names.sorted { $0.key < $1.key }.compactMap { (name, id) in
            let key = NodeKey.scratch(id)
            let ino = inodes.inode(for: key)
            return (try? attributes(key, inode: ino, caller: caller)).map { DirectoryEntry(name: name, attributes: $0, entryTimeout: Self.entryTimeout, node: key) }
        }
    }

    // MARK: df

    public func statistics(caller: CallerContext) -> FileSystemStatistics {
        var quota: Int64 = 0
        var used: Int64 = 0
        var files: UInt64 = 0
        for c in shownContainers() {
            for key in [DatabaseKey(container: c, scope: .public, user: ""), DatabaseKey(container: c, scope: .private, user: users.userName(caller.uid))] {
                guard let db = try? database(key, caller: caller) else { continue }
                quota += db.quotaBytes
                used += (try? db.usage()) ?? 0
                // Counted from the zones' directories: df must not load every zone.
                for z in (try? db.zones()) ?? [] { files += UInt64((try? db.recordCount(in: z.zoneID.zoneName)) ?? 0) }
            }
        }
        let block: Int64 = 4096
        let total = max(quota / block, 1)
        let usedBlocks = (used + block - 1) / block
        return FileSystemStatistics(blockSize: UInt64(block), blocks: UInt64(total), freeBlocks: UInt64(max(total - usedBlocks, 0)),
                                    files: files + 1_000_000, freeFiles: 1_000_000, nameMax: 255)
    }
}
