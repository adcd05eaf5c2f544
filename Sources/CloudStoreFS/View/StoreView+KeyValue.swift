import CloudStore
import Foundation

/// `<container>/keyvalue/<key>.plist`: the caller's key-value entries, one XML property list
/// per key. Writing a file sets the key with every check the API makes; removing it
/// removes the key. The view reads the store's file again only when its identity changes, and
/// drops the kernel's cache of the entries that changed.
extension StoreView {
    func keyValueStorage(_ ref: KeyValueRef) throws(FSError) -> any KeyValueStorage {
        if let f = keyValueCache.file(ref) { return f }
        do {
            let f = try store.container(ref.container).keyValueStorage(caller: engineCaller(ref.user), environment: environment)
            keyValueCache.keep(f, for: ref)
            return f
        } catch {
            throw error.fsError
        }
    }

    /// The store as on disk now: one small read when it is unchanged, else the whole file,
    /// with the kernel told of every entry that changed.
    func keyValues(_ ref: KeyValueRef) throws(FSError) -> KeyValueSnapshot {
        let file = try keyValueStorage(ref)
        let cached = keyValueCache.snapshot(ref)
        do {
            if let cached, try file.version() == cached.version { return cached }
            let fresh = try file.read()
            adopt(fresh, for: ref)
            return fresh
        } catch {
            throw error.fsError
        }
    }

    /// Takes `fresh` as the store of `ref` and drops what changed from every cache. What changed
    /// is found against the store the view holds, in the same step that replaces it, so the
    /// kept texts are always the held store's even when two adoptions race.
    func adopt(_ fresh: KeyValueSnapshot, for ref: KeyValueRef) {
        let (changed, hadOne) = keyValueCache.adopt(fresh, for: ref)
        guard hadOne else { return }
        let folder = inodes.existingInode(for: .keyValueFolder(ref))
        for key in changed {
            let target = ItemTarget.keyValue(ref, key: key)
            if let ino = inodes.existingInode(for: target.key) { notifier?.invalidateNode(ino) }
            if let folder { notifier?.invalidateEntry(parent: folder, name: target.fileName) }
        }
    }

    /// An entry's file text (an XML property list of its value) and a version tag for it.
    func keyValueText(_ ref: KeyValueRef, _ key: String) throws(FSError) -> (text: [UInt8], tag: String)? {
        let target = ItemTarget.keyValue(ref, key: key)
        guard let value = try keyValues(ref).entries[key] else { return nil }
        if let hit = keyValueCache.text(target) { return hit }
        let text = PropertyListWriter.document(value)
        let rendered = (text, String(CRC32C.checksum(text), radix: 16))
        // Kept only while the held store still has this value: a save that replaced it meanwhile
        // dropped the texts it changed, and a text of the value before must not come back.
        keyValueCache.keep(rendered, of: value, for: ref, key: key)
        return rendered
    }

    /// When a key-value store's file last changed, as its entries' files show it.
    func keyValueModified(_ ref: KeyValueRef) -> Int64 {
        keyValueCache.snapshot(ref)?.modified ?? started
    }

    func keyValueAttributes(_ ref: KeyValueRef, _ key: String, inode: UInt64) throws(FSError) -> NodeAttributes? {
        guard let (text, _) = try keyValueText(ref, key) else { return nil }
        let owner = users.uid(ofUserNamed: ref.user) ?? daemonUID
        let (size, modified) = shownVersion(inode, size: Int64(text.count), modified: keyValueModified(ref))
        return NodeAttributes(inode: inode, kind: .file, permissions: 0o600, links: 1, uid: owner, gid: owner == daemonUID ? daemonGID : owner,
                              size: size, modified: modified, changed: modified, accessed: modified)
    }

    /// Checks a key a file name stands for: too long is ENAMETOOLONG, as for any long name.
    func checkKey(_ key: String, ref: KeyValueRef) throws(FSError) {
        let limits = store.settings.keyValueLimits
        if key.utf8.count > limits.maxKeyBytes {
            throw FSError(Posix.ENAMETOOLONG, "the key \"\(key.prefix(80))\" is \(key.utf8.count) bytes of UTF-8; a key-value key has at most \(limits.maxKeyBytes)")
        }
        do { try limits.checkKey(key) } catch { throw FSError(Posix.EINVAL, error.message) }
    }

    /// Sets the entry to the value `text` holds, with every check of an API write: a text
    /// that is no property list is EINVAL, a value over its limit EFBIG, a store over its
    /// limits EDQUOT. The same value again writes nothing.
    func saveKeyValue(_ text: [UInt8], _ ref: KeyValueRef, key: String) throws(FSError) {
        try checkKey(key, ref: ref)
        let value: PropertyListValue
        do { value = try PropertyListParser.parse(text) } catch {
            throw FSError(Posix.EINVAL, text.isEmpty ? "the file is empty; a key-value file holds one property-list value" : "not a valid XML property list at \(error.description)")
        }
        let file = try keyValueStorage(ref)
        do {
            let (snapshot, _) = try file.update { (entries: inout KeyValueEntries) throws(CKError) in
                if entries[key] != value { try entries.set(value, forKey: key) }
            }
            adopt(snapshot, for: ref)
        } catch {
            throw FSError(error.errno, "\(error.code.name): \(error.message)")
        }
    }

    func deleteKeyValue(_ ref: KeyValueRef, key: String) throws(FSError) {
        let file = try keyValueStorage(ref)
        let result: (snapshot: KeyValueSnapshot, result: Bool)
        do {
            result = try file.update { (entries: inout KeyValueEntries) throws(CKError) -> Bool in entries.remove(key) }
        } catch {
            throw error.fsError
        }
        adopt(result.snapshot, for: ref)
        if !result.result { throw FSError(Posix.ENOENT, "no key \"\(key)\"") }
    }

    /// Every key-value folder the view has shown, for the watcher.
    var openKeyValueRefs: [KeyValueRef] { keyValueCache.refs }
}

extension KeyValueSnapshot {
    /// When the file was last written, in milliseconds since 1970.
    var modified: Int64? { version?.modifiedMilliseconds }
}
