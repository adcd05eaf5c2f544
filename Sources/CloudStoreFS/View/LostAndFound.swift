import CloudStore
import Foundation

/// Rejected text, kept where the user will find it: `lost+found/` at the mount root, backed
/// by `<store>/lost+found/`. Shells ignore close errors (`echo bad > r.json` exits 0), so
/// the text and the reason must outlive the failed save.
///
/// Each rejection writes `<name>-<hash>.json` (or `.plist`: the text as written, under the
/// extension of the file it was meant for) and `<name>-<hash>.txt` (where it was going and
/// why it was refused); the same text refused again for the same
/// record replaces its earlier copy instead of piling up.
struct LostAndFound: Sendable {
    let directory: String

    init(storeRoot: String) { directory = storeRoot + "/lost+found" }

    /// Keeps `text`, refused for `mountPath` because of `reason`; returns the file name.
    @discardableResult
    func keep(_ text: [UInt8], mountPath: String, reason: String, owner: CallerContext) -> String? {
        guard !text.isEmpty else { return nil }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var base = String(mountPath.split(separator: "/").last ?? "file")
        var ext = ".json"
        for known in [".json", ".plist"] where base.hasSuffix(known) {
            base.removeLast(known.count)
            ext = known
        }
        base = String(base.prefix(100)).replacingOccurrences(of: "%", with: "_")
        let hash = String(CRC32C.checksum(Array(mountPath.utf8) + [0] + text), radix: 16)
        let name = "\(base)-\(hash)"
        let stamp = PropertyListWriter.dateText(Date()) ?? ""
        let note = """
        ckfs could not save \(mountPath)
        when: \(stamp)
        why: \(reason)
        The text as written is in \(name)\(ext) next to this file; fix it and copy it back.

        """
        for (file, bytes) in [(name + ext, text), (name + ".txt", Array(note.utf8))] {
            let path = directory + "/" + file
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { continue }
            _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if geteuid() == 0 { _ = fchown(fd, owner.uid, owner.gid) }
            close(fd)
        }
        return name + ext
    }
}
