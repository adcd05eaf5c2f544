import Foundation

/// A zone's asset files: `assets/<sha256>`, one per content, shared by the zone's records that
/// hold that content. Stored under the writer's lock before the commit point; a transaction's
/// new files that no committed record names are removed before the lock is let go
/// (``ZoneFolder/write(_:committed:)``); a file no record and no entry of the log names is
/// removed when the log is compacted past the last entry that named it, and by fsck.
/// docs/Durability.md ("Assets") has the whole lifecycle.
extension ZoneFolder {
    /// Stores an asset's contents content-addressed (before the commit point), durably; and
    /// whether its file is new.
    func storeAsset(from path: String) throws(CKError) -> (Asset, created: Bool) {
        guard let bytes = try Syscall.readFile(path).orThrow(.assetFileNotFound, "cannot read asset file \(path)") else {
            throw CKError(.assetFileNotFound, "asset file \(path) does not exist; give the path of an existing file")
        }
        let checksum = AssetHasher.sha256Hex(bytes)
        let target = StoreLayout.assetFile(directory, checksum: checksum)
        let asset = Asset(fileChecksum: checksum, size: Int64(bytes.count))
        if case .success(_?) = Syscall.stat(target) { return (asset, false) }
        try writer.replace(target, with: bytes, durable: true)
        return (asset, true)
    }

    /// The size of asset file `checksum`; nil when the zone has no such file.
    func storedAssetSize(_ checksum: String) -> Int64? {
        guard AssetHasher.isChecksum(checksum), case .success(let st?) = Syscall.stat(StoreLayout.assetFile(directory, checksum: checksum)) else { return nil }
        return st.size
    }

    /// Removes asset files; with the writer's lock held, so no writer finds one of them there
    /// and names it meanwhile. A file that cannot be removed stays for the next sweep.
    func removeAssets<S: Sequence>(_ checksums: S) where S.Element == String {
        for sum in checksums { _ = Syscall.unlink(StoreLayout.assetFile(directory, checksum: sum)) }
    }

    /// The asset files of the zone (temporary files left out).
    func assetFileChecksums() throws(CKError) -> Set<String> {
        let dir = StoreLayout.assetsDirectory(directory)
        let names = try Syscall.listDirectory(dir).orThrow(.internalError, "cannot list \(dir)") ?? []
        return Set(names.filter(AssetHasher.isChecksum))
    }

    /// After a compaction (writer's and apply locks held, every entry applied to the record
    /// files): removes the asset files that neither an entry the log kept (`keptLog` reads
    /// them) nor a record file names. Returns the checksums removed. A zone with no asset
    /// files reads nothing, and record files are read only when some file is named by no kept
    /// entry; a record file that cannot be read stops the sweep (fsck takes it up), so a file
    /// is never removed on a partial reading.
    @discardableResult
    func sweepAssets(keptLog: () throws(CKError) -> [UInt8]) throws(CKError) -> Set<String> {
        var unnamed = try assetFileChecksums()
        guard !unnamed.isEmpty else { return [] }
        unnamed.subtract(Self.assetChecksums(named: try keptLog()))
        guard !unnamed.isEmpty else { return [] }
        let files = try Syscall.listDirectory(recordsPath).orThrow(.internalError, "cannot list \(recordsPath)") ?? []
        for file in files where !file.hasPrefix(FileWriter.tempPrefix) {
            let path = recordsPath + "/" + file
            guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { continue }
            unnamed.subtract(Self.assetChecksums(named: bytes))
            if unnamed.isEmpty { return [] }
        }
        removeAssets(unnamed)
        return unnamed
    }

    /// Every checksum that follows a `fileChecksum` key in JSON text (a record file, log
    /// entries): a byte scan, no parse. It may find more than the asset values hold (a string
    /// that happens to read so), never fewer, which is the safe side for a sweep.
    static func assetChecksums(named text: [UInt8]) -> Set<String> {
        let key = Array("\"fileChecksum\"".utf8)
        var found: Set<String> = []
        text.withUnsafeBufferPointer { b in
            var i = 0
            let n = b.count
            while i + key.count < n {
                guard b[i] == key[0], b[i + 1] == key[1] else { i += 1; continue }
                var matched = true
                for k in 2..<key.count where b[i + k] != key[k] { matched = false; break }
                guard matched else { i += 1; continue }
                var j = i + key.count
                while j < n, b[j] == UInt8(ascii: " ") || b[j] == UInt8(ascii: ":") || b[j] == UInt8(ascii: "\n") { j += 1 }
                if j < n, b[j] == UInt8(ascii: "\""), j + 65 <= n {
                    let hex = b[(j + 1)..<(j + 65)]
                    if hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) { found.insert(String(decoding: hex, as: UTF8.self)) }
                }
                i = j
            }
        }
        return found
    }
}
