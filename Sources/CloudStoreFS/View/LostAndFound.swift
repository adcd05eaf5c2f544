import CloudStore
import Foundation
import Logging

/// Rejected text, kept where the user will find it: `lost+found/` at the mount root, backed
/// by `<store>/lost+found/`. Shells ignore close errors (`echo bad > r.json` exits 0), so
/// the text and the reason must outlive the failed save.
///
/// Each rejection writes `<name>-<hash>.json` (or `.plist`: the text as written, under the
/// extension of the file it was meant for) and `<name>-<hash>.txt` (where it was going and
/// why it was refused); the same text refused again for the same
/// record replaces its earlier copy instead of piling up.
///
/// The folder is private to the store's owner (0700) and each file to its writer (0600,
/// given to the writer when the daemon runs as root): through the mount each caller sees and
/// reads only their own entries; root and the daemon's user see all. Each writer keeps at most
/// ``maxEntriesPerOwner`` entries; past it their oldest go, logged.
struct LostAndFound: Sendable {
    let directory: String
    /// Rejected texts kept per writer (each a text and its note).
    static let maxEntriesPerOwner = 100

    init(storeRoot: String) { directory = storeRoot + "/lost+found" }

    /// Keeps `text`, refused for `mountPath` because of `reason`; returns the file name.
    /// Entries of `owner` past the bound are removed, oldest first, and told to `log`.
    @discardableResult
    func keep(_ text: [UInt8], mountPath: String, reason: String, owner: CallerContext, logger: Logger) -> String? {
        guard !text.isEmpty else { return nil }
        _ = Syscall.mkdir(directory)
        var base = String(mountPath.split(separator: "/").last ?? "file")
        var ext = ".json"
        for known in [".json", ".plist"] where base.hasSuffix(known) {
            base.removeLast(known.count)
            ext = known
        }
        base = String(base.prefix(100)).replacingOccurrences(of: "%", with: "_")
        // The writer counts: two users' private paths read alike, and neither may replace the other's file.
        let hash = String(CRC32C.checksum(Array(mountPath.utf8) + [0] + Array(String(owner.uid).utf8) + [0] + text), radix: 16)
        let name = "\(base)-\(hash)"
        let stamp = PropertyListWriter.dateText(Date()) ?? ""
        let note = """
        ckfs could not save \(mountPath)
        when: \(stamp)
        why: \(reason)
        The text as written is in \(name)\(ext) next to this file; fix it and copy it back.

        """
        // The same text refused again replaces its copy: the count grows only with a new entry.
        let isNew = (try? Syscall.stat(directory + "/" + name + ext, times: true, followingLinks: false).get()) == nil
        let me = Syscall.effectiveUserID
        for (file, bytes) in [(name + ext, text), (name + ".txt", Array(note.utf8))] {
            let path = directory + "/" + file
            guard case .success(let fd) = Syscall.open(path, Posix.O_WRONLY | Posix.O_CREAT | Posix.O_TRUNC) else { continue }
            _ = Syscall.writeAll(fd, bytes, path: path)
            if me == 0 { _ = Syscall.fchown(fd, owner: owner.uid, group: owner.gid, path: path) }
            Syscall.close(fd)
        }
        if isNew { bound(fileOwner: me == 0 ? owner.uid : me, keeping: name, logger: logger) }
        return name + ext
    }

    /// Removes the oldest entries of the files owned by `fileOwner` past ``maxEntriesPerOwner``,
    /// never the entry `keeping` just written.
    private func bound(fileOwner: UInt32, keeping: String, logger: Logger) {
        var newest: [String: (modified: Int64, files: [String])] = [:]
        for name in allNames() {
            guard case .success(let status?) = Syscall.stat(directory + "/" + name, times: true, followingLinks: false),
                  status.owner == fileOwner else { continue }
            let entry = (name as NSString).deletingPathExtension
            let modified = status.modifiedNanos
            newest[entry, default: (0, [])].modified = max(newest[entry]?.modified ?? 0, modified)
            newest[entry]?.files.append(name)
        }
        guard newest.count > Self.maxEntriesPerOwner else { return }
        let oldest = newest.filter { $0.key != keeping }.sorted { ($0.value.modified, $0.key) < ($1.value.modified, $1.key) }
        for (_, value) in oldest.prefix(newest.count - Self.maxEntriesPerOwner) {
            for file in value.files { _ = Syscall.unlink(directory + "/" + file) }
            logger.notice("lost+found keeps at most \(Self.maxEntriesPerOwner) rejected texts per user: removed the oldest of uid \(fileOwner), \(value.files.sorted().joined(separator: " and "))")
        }
    }

    /// Whether the caller `uid` sees entry `name`: their own (the file is theirs), or any for
    /// root and the daemon's user.
    func isVisible(_ name: String, to uid: UInt32) -> Bool {
        guard case .success(let status?) = Syscall.stat(directory + "/" + name, times: true, followingLinks: false) else { return false }
        return uid == 0 || uid == Syscall.effectiveUserID || status.owner == uid
    }

    /// The entries the caller `uid` sees (see ``isVisible(_:to:)``).
    func names(visibleTo uid: UInt32) -> [String] {
        let all = allNames()
        if uid == 0 || uid == Syscall.effectiveUserID { return all }
        return all.filter { isVisible($0, to: uid) }
    }

    /// Every file in the folder; none when it cannot be listed (it is made at the first entry).
    private func allNames() -> [String] {
        guard case .success(let names?) = Syscall.listDirectory(directory) else { return [] }
        return names
    }
}
