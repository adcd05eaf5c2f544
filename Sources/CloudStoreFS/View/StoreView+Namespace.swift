import CloudStore
import Foundation
import Logging

extension StoreView {
    // MARK: rm

    public func unlink(parent: UInt64, name: String, caller: CallerContext) throws(FSError) {
        let dir = try key(parent)
        let node = try child(of: dir, named: name, caller: caller)
        switch node {
        case .scratch(let id):
            // An item renamed to this name and not saved again since is really gone now: it is
            // deleted first, so a refused delete (another user's public record) leaves both the
            // item and this name as they were.
            let s = scratch.file(id)
            if let origin = s?.lock.withLock({ s?.origin }), scratch.hides(origin, behind: id) {
                try deleteItem(origin, caller: caller)
                scratch.unhide(origin)
            }
            scratch.remove(id, named: name, in: dir)
        case .record, .keyValueEntry:
            let target = ItemTarget(node)!
            if let pending = pendingCreates.take(target) {
                // Created and not saved yet: removing it drops what was written.
                pending.lock.withLock { pending.dirty = false }
                return
            }
            try deleteItem(target, caller: caller)
        case .lostFoundFile(let file):
            if case .failure(let e) = Syscall.unlink(lostAndFound.directory + "/" + file) { throw FSError(e.errno, "cannot remove \(file)") }
        default:
            throw FSError(Posix.EISDIR)
        }
    }

    func deleteRecord(_ target: RecordTarget, caller: CallerContext) throws(FSError) {
        let db = try database(target.database, caller: caller)
        let result: ModifyResult
        do { result = try db.modify(saving: [], deleting: [RecordID(recordName: target.name, zoneID: db.zoneID(target.zone))]) } catch {
            throw error.fsError
        }
        logNotificationErrors(result)
        if let error = result.error {
            logger.notice("refused delete of \(mountPath(.record(target))): \(error.fsError.reason)")
            throw error.fsError
        }
        _ = try? catalog(target.database, target.zone)
    }

    // MARK: mkdir, rmdir: zones and type folders

    public func makeDirectory(parent: UInt64, name: String, caller: CallerContext) throws(FSError) -> NodeEntry {
        try checkName(name)
        let dir = try key(parent)
        if (try? child(of: dir, named: name, caller: caller)) != nil { throw FSError(Posix.EEXIST) }
        switch dir {
        case .database(let d):
            guard let zone = StoreLayout.decode(name) else { throw FSError(Posix.EINVAL, "\(name) is not a valid encoding of a zone name") }
            let db = try database(d, caller: caller)
            notifier?.willWait()
            do throws(CKError) { _ = try db.createZone(zone) } catch {
                logger.notice("refused mkdir of zone \(zone): \(error.message)")
                throw error.fsError
            }
            return try entry(.zone(d, zone), caller: caller)
        case .zone(let d, let zone):
            do { try Names.checkRecordType(name) } catch {
                throw FSError(Posix.EINVAL, "a folder in a zone is a record type: \(error.message)")
            }
            let key = NodeKey.recordType(d, zone: zone, type: name)
            madeTypeFolders.insert(key)
            return try entry(key, caller: caller)
        default:
            throw FSError(Posix.EPERM, "folders can be made only for zones (in private/) and record types (in a zone)")
        }
    }

    public func removeDirectory(parent: UInt64, name: String, caller: CallerContext) throws(FSError) {
        let dir = try key(parent)
        let node = try child(of: dir, named: name, caller: caller)
        switch node {
        case .zone(let d, let zone):
            if zone == ZoneID.defaultZoneName { throw FSError(Posix.EPERM, "the default zone cannot be deleted") }
            let types = try recordTypes(d, zone)
            let hasScratch = scratch.holdsFiles(inZone: d, zone)
                || madeTypeFolders.hasFolder(in: d, zone: zone)
            if !types.isEmpty || hasScratch { throw FSError(Posix.ENOTEMPTY) }
            let db = try database(d, caller: caller)
            notifier?.willWait()
            do throws(CKError) { try db.deleteZone(zone) } catch {
                logger.notice("refused rmdir of zone \(zone): \(error.message)")
                throw error.fsError
            }
            catalogs.forget(ZoneRef(database: d, zone: zone))
            madeTypeFolders.forgetZone(d, zone)
        case .recordType(let d, let zone, let type):
            if try hasRecords(d, zone, type: type) || scratch.holdsFiles(in: node) {
                throw FSError(Posix.ENOTEMPTY)
            }
            madeTypeFolders.remove(node)
        default:
            throw FSError(node.isDirectory ? Posix.EPERM : Posix.ENOTDIR, "only zone and record type folders can be removed")
        }
    }

    // MARK: mv

    public func rename(parent: UInt64, name: String, newParent: UInt64, newName: String, flags: UInt32, caller: CallerContext) throws(FSError) {
        try checkName(newName)
        let noReplace: UInt32 = 1, exchange: UInt32 = 2
        if flags & exchange != 0 { throw FSError(Posix.EINVAL, "exchanging names is not supported") }
        let fromDir = try key(parent)
        let toDir = try key(newParent)
        let source = try child(of: fromDir, named: name, caller: caller)
        let existing = try? child(of: toDir, named: newName, caller: caller)
        if existing != nil && flags & noReplace != 0 { throw FSError(Posix.EEXIST) }
        if existing == source { return }
        if source.isDirectory { throw FSError(Posix.EPERM, "zones and record type folders cannot be renamed") }
        var toItem = ItemTarget(folder: toDir, fileName: newName)
        if toItem == nil { toItem = try longRecordTarget(toDir, newName) }
        if toItem == nil { try checkNotAnUnsavableItemName(toDir, newName) }
        guard let fromPlace = Self.place(fromDir), fromPlace == Self.place(toDir) else {
            throw FSError(Posix.EXDEV, "files can be moved only among the zones of the store, or within keyvalue/")
        }
        switch source {
        case .scratch(let id):
            guard let s = scratch.file(id) else { throw FSError(Posix.ENOENT) }
            if let target = toItem {
                // sed -i, rsync and editors save by renaming a finished file onto the name.
                let (bytes, origin) = s.lock.withLock { (s.bytes, s.origin) }
                let replaced = inodes.existingInode(for: target.key)
                do { try save(bytes, as: target, caller: caller) } catch {
                    reject(bytes, target: target, error: error, caller: caller)
                    throw error
                }
                scratch.remove(id, named: name, in: fromDir)
                if let origin, origin != target, scratch.hides(origin, behind: id) {
                    // `mv a.json a.tmp; mv a.tmp b.json`: the item moved to its new name.
                    try? deleteItem(origin, caller: caller)
                    scratch.unhide(origin)
                }
                moved(source, to: target.key, replacing: replaced)
            } else {
                try replaceScratchName(toDir, newName, caller: caller)
                scratch.move(id, from: fromDir, named: name, to: toDir, as: newName)
            }
        case .record, .keyValueEntry:
            let from = ItemTarget(source)!
            guard let (bytes, _) = try current(from) else { throw FSError(Posix.ENOENT) }
            try checkMayChange(from, deleting: true, caller: caller)
            if let target = toItem {
                // mv between names: a save of the new name, then a delete of the old.
                if case .record(let f) = from, case .record(let t) = target,
                   t.database == f.database && t.zone == f.zone && t.type != f.type && t.name == f.name {
                    throw FSError(Posix.EINVAL, "a record's type never changes; save a new record under another name instead")
                }
                let replaced = inodes.existingInode(for: target.key)
                do { try save(bytes, as: target, caller: caller) } catch {
                    reject(bytes, target: target, error: error, caller: caller)
                    throw error
                }
                try deleteItem(from, caller: caller)
                moved(source, to: target.key, replacing: replaced)
            } else {
                // Renamed away (vim's backup, `mv a.json a.bak`): hide the item behind a
                // scratch copy; it is deleted only when that copy is removed.
                try replaceScratchName(toDir, newName, caller: caller)
                guard let attrs = try itemAttributes(from, inode: inodes.inode(for: from.key)) else { throw FSError(Posix.ENOENT) }
                let id = scratch.hide(from, behind: newName, in: toDir, text: bytes,
                                      permissions: attrs.permissions, uid: attrs.uid, gid: attrs.gid, now: attrs.modified)
                moved(source, to: .scratch(id), replacing: nil)
            }
        default:
            throw FSError(Posix.EPERM, "only record, key-value and scratch files can be moved")
        }
    }

    /// After a rename the kernel reaches the moved file's inode by the new name (its dentry
    /// moves; the replaced file's is dropped), so that inode must now mean what the new name
    /// holds. Without this, an edit that saved nothing (`sed -i` that matched nothing) left
    /// the name leading to the gone scratch file: ENOENT until the kernel forgot it. The
    /// moved inode's cached size is dropped before the rename returns, and its pages at its
    /// next open: the saved record renders its own bytes (new change tag), not the scratch
    /// file's.
    private func moved(_ source: NodeKey, to key: NodeKey, replacing replaced: UInt64?) {
        let ino = inodes.rebind(source, to: key)
        if let ino { savedOver(ino) }
        if let replaced, replaced != ino { notifier?.invalidateNode(replaced) }
    }

    /// Which kind of place a folder is, for moves: files move among zones' folders, or within
    /// key-value folders, never between the two.
    private static func place(_ dir: NodeKey) -> String? {
        switch dir {
        case .zone, .recordType: "zones"
        case .keyValueFolder: "keyvalue"
        default: nil
        }
    }

    /// Removes a scratch file a rename replaces; a record in the way is not replaced by a
    /// scratch file (that would delete it): EEXIST.
    private func replaceScratchName(_ dir: NodeKey, _ name: String, caller: CallerContext) throws(FSError) {
        guard let existing = try? child(of: dir, named: name, caller: caller) else { return }
        guard case .scratch(let id) = existing else { throw FSError(Posix.EEXIST, "\(name) is a record; remove it first") }
        scratch.remove(id, named: name, in: dir)
    }
}
