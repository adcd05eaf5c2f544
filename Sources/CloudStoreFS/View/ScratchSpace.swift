import CloudStore
import Foundation
import Logging

/// Editors' and tools' temporary files (vim's swap files, `sed -i`'s and rsync's unfinished
/// copies, anything not named as a record or a key-value entry): they live in the daemon's
/// memory under the names they were made with and never reach the store. Also the items
/// renamed to such a name (vim's backup, `mv a.json a.bak`), hidden from their folder behind
/// their scratch copy until it is saved back or removed.
///
/// What any account holder can make here is bounded: per uid, past which writes fail with
/// EDQUOT, and in all, past which they fail with ENOSPC.
final class ScratchSpace: @unchecked Sendable {
    static let bytesPerUser = 64 << 20
    static let bytesInAll = 256 << 20

    private let logger: Logger
    /// Guards every `var` below and each file's `accounted`; a leaf of the daemon's lock
    /// order (docs/Durability.md#the-mount-daemons): taken after an open or scratch file's own
    /// lock and after the view's `ZoneGenerations` and `PendingCreates` locks, and nothing is
    /// called while it is held.
    private let lock = NSLock()
    private var files: [UInt64: ScratchFile] = [:]
    /// File names per folder.
    private var names: [NodeKey: [String: UInt64]] = [:]
    private var nextID: UInt64 = 1
    /// Bytes held for each uid, and in all.
    private var usage: [UInt32: Int] = [:]
    private var total = 0
    /// Items renamed to a scratch name, with the scratch file that holds their text.
    private var hidden: [ItemTarget: UInt64] = [:]

    init(logger: Logger) {
        self.logger = logger
    }

    // MARK: Files and names

    func file(_ id: UInt64) -> ScratchFile? {
        lock.withLock { files[id] }
    }

    /// The file `name` names in `folder`, if a scratch file has that name.
    func id(in folder: NodeKey, named name: String) -> UInt64? {
        lock.withLock { names[folder]?[name] }
    }

    /// The scratch files of `folder`, by name.
    func names(in folder: NodeKey) -> [String: UInt64] {
        lock.withLock { names[folder] ?? [:] }
    }

    func holdsFiles(in folder: NodeKey) -> Bool {
        lock.withLock { names[folder]?.isEmpty == false }
    }

    /// Whether any folder of the zone, or the zone's own folder, holds a scratch file.
    func holdsFiles(inZone database: DatabaseKey, _ zone: String) -> Bool {
        lock.withLock { names.contains { $0.key.zone.map { $0.0 == database && $0.1 == zone } ?? false && !$0.value.isEmpty } }
    }

    /// A new empty file named `name` in `folder`; nil when a scratch file has that name.
    func make(in folder: NodeKey, named name: String, permissions: UInt32, uid: UInt32, gid: UInt32, now: Int64) -> ScratchFile? {
        lock.withLock {
            if names[folder]?[name] != nil { return nil }
            let s = ScratchFile(id: nextID, permissions: permissions, uid: uid, gid: gid, now: now)
            nextID += 1
            files[s.id] = s
            names[folder, default: [:]][name] = s.id
            return s
        }
    }

    /// Removes file `id` and its name `name` in `folder` (the name only while it still leads
    /// to that file), and gives back the bytes it held.
    func remove(_ id: UInt64, named name: String, in folder: NodeKey) {
        lock.withLock {
            unnameLocked(id, name, in: folder)
            if let gone = files.removeValue(forKey: id) { accountLocked(gone, bytes: 0) }
        }
    }

    /// Renames file `id` from `name` in `folder` to `newName` in `newFolder`; nothing when the
    /// file was removed meanwhile.
    func move(_ id: UInt64, from folder: NodeKey, named name: String, to newFolder: NodeKey, as newName: String) {
        lock.withLock {
            guard files[id] != nil else { return }
            unnameLocked(id, name, in: folder)
            names[newFolder, default: [:]][newName] = id
        }
    }

    /// Takes the name `name` in `folder` from file `id`, if it still leads there. Lock held.
    private func unnameLocked(_ id: UInt64, _ name: String, in folder: NodeKey) {
        if names[folder]?[name] == id { names[folder]?[name] = nil }
        if names[folder]?.isEmpty == true { names[folder] = nil }
    }

    // MARK: Items hidden behind a scratch copy

    /// Hides `item` behind a new scratch file named `name` in `folder` holding its text, and
    /// returns that file's number. The item's own text is already bounded by the item's limit,
    /// so it is counted and never refused.
    func hide(_ item: ItemTarget, behind name: String, in folder: NodeKey, text: [UInt8],
              permissions: UInt32, uid: UInt32, gid: UInt32, now: Int64) -> UInt64 {
        lock.withLock {
            let s = ScratchFile(id: nextID, permissions: permissions, uid: uid, gid: gid, now: now)
            nextID += 1
            s.bytes = text
            s.origin = item
            accountLocked(s, bytes: text.count)
            files[s.id] = s
            names[folder, default: [:]][name] = s.id
            hidden[item] = s.id
            return s.id
        }
    }

    func isHidden(_ item: ItemTarget) -> Bool {
        lock.withLock { hidden[item] != nil }
    }

    /// Whether `item` is hidden behind scratch file `id` (and not saved again since).
    func hides(_ item: ItemTarget, behind id: UInt64) -> Bool {
        lock.withLock { hidden[item] == id }
    }

    /// `item` shows in its folder again: saved, or deleted.
    func unhide(_ item: ItemTarget) {
        _ = lock.withLock { hidden.removeValue(forKey: item) }
    }

    /// The items of `folder` hidden behind a scratch copy.
    func hiddenItems(in folder: NodeKey) -> Set<ItemTarget> {
        lock.withLock { Set(hidden.keys.filter { $0.folder == folder }) }
    }

    /// Whether `folder` lists anything that is not a saved item: a scratch file, or an item
    /// hidden behind one.
    func holdsEntriesInFlight(_ folder: NodeKey) -> Bool {
        lock.withLock { names[folder]?.isEmpty == false || hidden.keys.contains { $0.folder == folder } }
    }

    // MARK: Bounds

    /// Counts `bytes` as `s`'s size from now on, or throws when growing to it passes a bound.
    /// A file removed while open (written through its handle still) counts no more. The
    /// scratch file's lock held.
    func account(_ s: ScratchFile, bytes: Int) throws(FSError) {
        let refusal = lock.withLock { () -> FSError? in
            guard files[s.id] === s else { return nil }
            let growth = bytes - s.accounted
            if growth > 0 {
                if usage[s.uid, default: 0] + growth > Self.bytesPerUser {
                    return FSError(Posix.EDQUOT, "uid \(s.uid)'s temporary files in the mount hold \(Self.bytesPerUser >> 20) MiB at most; remove some (editors' swap and backup files, unfinished copies)")
                }
                if total + growth > Self.bytesInAll {
                    return FSError(Posix.ENOSPC, "temporary files in the mount hold \(Self.bytesInAll >> 20) MiB at most in all; remove some")
                }
            }
            accountLocked(s, bytes: bytes)
            return nil
        }
        if let refusal {
            logger.notice("refused a write to a temporary file: \(refusal.reason)")
            throw refusal
        }
    }

    /// `s` was emptied: it holds no bytes from now on. The scratch file's lock held.
    func emptied(_ s: ScratchFile) {
        lock.withLock { accountLocked(s, bytes: 0) }
    }

    /// Counts `bytes` as `s`'s size whatever the bounds. Lock held.
    private func accountLocked(_ s: ScratchFile, bytes: Int) {
        let growth = bytes - s.accounted
        s.accounted = bytes
        usage[s.uid, default: 0] += growth
        if usage[s.uid] == 0 { usage[s.uid] = nil }
        total += growth
    }
}
