import Foundation

/// One user's key-value store in the file backend: `keyvalue.plist` in the user's private
/// folder, an XML property list holding one dictionary, as Python's `plistlib` or any plist
/// reader reads it.
///
/// Every change is a read-modify-write under an exclusive `flock` on `keyvalue.lock` next to
/// it, and the file is replaced the crash-safe way: readers never lock and see
/// the old file or the new one. A comment before `<plist>` carries a generation number that
/// every write raises, so a client can tell versions apart even when inode numbers are reused
/// within one timestamp tick.
///
/// `@unchecked Sendable`: its one `var`, `swept`, is behind `sweepLock`.
package final class KeyValueFile: KeyValueStorage, @unchecked Sendable {
    package let path: String
    let lockPath: String
    /// The user's private folder, which holds the file.
    package let directory: String
    let writer: FileWriter
    package let limits: KeyValueLimits
    /// Guards `swept`: whether this object's first write has looked for killed writers' temp files.
    private let sweepLock = NSLock()
    private var swept = false

    init(directory: String, writer: FileWriter, limits: KeyValueLimits) {
        self.directory = directory
        self.writer = writer
        self.limits = limits
        self.path = directory + "/keyvalue.plist"
        self.lockPath = directory + "/keyvalue.lock"
    }

    /// The version of the file with this status and generation comment.
    static func version(generation: Int64?, status: Syscall.FileStatus) -> KeyValueVersion {
        KeyValueVersion(generation: generation ?? 0, modifiedMilliseconds: status.modified,
                        stamp: [generation == nil ? -1 : 0, Int64(bitPattern: status.device), Int64(bitPattern: status.inode), status.size,
                                status.modifiedNanos, status.changedNanos])
    }

    static let generationPrefix = "ckfs generation "

    /// The version of the file now, cheaply (its head and status): nil when there is none.
    package func version() throws(CKError) -> KeyValueVersion? {
        let fd: Int32
        switch Syscall.open(path, Posix.O_RDONLY) {
        case .success(let f): fd = f
        case .failure(let e):
            if e.errno == Posix.ENOENT { return nil }
            throw CKError(.internalError, "cannot open \(path)", cause: .system(e))
        }
        defer { Syscall.close(fd) }
        let status = try Syscall.fstat(fd, path: path, times: true).orThrow(.internalError, "cannot stat \(path)")
        let head = try Syscall.pread(fd, count: 512, offset: 0, path: path).orThrow(.internalError, "cannot read \(path)")
        return Self.version(generation: Self.generation(in: head), status: status)
    }

    static func generation(in head: some Collection<UInt8>) -> Int64? {
        let bytes = Array(head.prefix(512))
        let prefix = Array(generationPrefix.utf8)
        guard bytes.count >= prefix.count else { return nil }
        for start in 0...(bytes.count - prefix.count) where bytes[start] == prefix[0] && Array(bytes[start..<(start + prefix.count)]) == prefix {
            var value: Int64 = 0
            var i = start + prefix.count
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, value < Int64.max / 10 - 9 {
                value = value * 10 + Int64(bytes[i] - 0x30)
                i += 1
            }
            return i > start + prefix.count ? value : nil
        }
        return nil
    }

    /// The whole store; empty when there is no file yet.
    package func read() throws(CKError) -> KeyValueSnapshot {
        guard let (bytes, status) = try Syscall.readFileAndStatus(path, times: true).orThrow(.internalError, "cannot read \(path)") else {
            return KeyValueSnapshot(entries: [:], version: nil)
        }
        let version = Self.version(generation: Self.generation(in: bytes.prefix(512)), status: status)
        let value: PropertyListValue
        do { value = try PropertyListParser.parse(bytes) } catch {
            throw CKError(.badDatabase, "\(path) is not a valid property list; fix it (see the position) or restore it from a backup, then run `ckfs fsck`", cause: .syntax(error))
        }
        guard case .dictionary(let entries) = value else {
            throw CKError(.badDatabase, "\(path) holds \(value.typeName == "array" ? "an" : "a") \(value.typeName), not a dictionary of keys and values; fix it or restore it from a backup")
        }
        return KeyValueSnapshot(entries: entries, version: version)
    }

    /// Changes the store under an exclusive `flock` on `keyvalue.lock`: a read-modify-write,
    /// the file replaced durably (``KeyValueStorage/update(_:)``).
    @discardableResult
    package func update<T>(_ body: (inout KeyValueEntries) throws(CKError) -> T) throws(CKError) -> (snapshot: KeyValueSnapshot, result: T) {
        try writer.makeDirectories(directory)
        return try withFileLock(lockPath) { () throws(CKError) -> (snapshot: KeyValueSnapshot, result: T) in
            let current = try read()
            var entries = KeyValueEntries(current.entries, limits: limits)
            let result = try body(&entries)
            if entries.values == current.entries { return (current, result) }
            // A file edited by hand past the limits is not written back larger (fsck names it).
            if entries.count > limits.maxKeys || entries.totalSize > limits.maxTotalBytes {
                throw CKError(.quotaExceeded, "\(path) holds more than the key-value limits allow; remove keys with `ckfs kv remove`")
            }
            // Only a writer holding the lock makes a temp file, so one there now was left by a
            // writer that was killed; looking once per object is enough.
            if sweepLock.withLock({ !swept }) {
                removeLeftoverTempFiles()
                sweepLock.withLock { swept = true }
            }
            let generation = current.generation + 1
            let bytes = PropertyListWriter.document(.dictionary(entries.values), comment: Self.generationPrefix + String(generation))
            try writer.replace(path, with: bytes, durable: true)
            let status = try Syscall.stat(path, times: true).orThrow(.internalError, "cannot stat \(path)")
            return (KeyValueSnapshot(entries: entries.values, version: status.map { Self.version(generation: generation, status: $0) }), result)
        }
    }

    /// Temp files of writers killed mid-write. Lock held.
    private func removeLeftoverTempFiles() {
        let prefix = FileWriter.tempPrefix + "keyvalue.plist-"
        guard case .success(let names?) = Syscall.listDirectory(directory) else { return }
        for name in names where name.hasPrefix(prefix) { _ = Syscall.unlink(directory + "/" + name) }
    }

    /// `ckfs fsck`'s part: temp files of killed writers go; a file that does not parse or breaks
    /// a limit is damage for a person to fix (nothing here guesses which values to drop).
    func check(_ report: inout CheckReport) {
        let leftovers = (try? Syscall.listDirectory(directory).get()).flatMap { $0 }?.filter { $0.hasPrefix(FileWriter.tempPrefix + "keyvalue.plist-") } ?? []
        if !leftovers.isEmpty {
            do throws(CKError) {
                try withFileLock(lockPath) { () throws(CKError) in removeLeftoverTempFiles() }
                report.repaired.append("\(directory): removed \(leftovers.count) temporary key-value file(s) left by an interrupted write")
            } catch {
                report.damage.append(error.message)
            }
        }
        do throws(CKError) {
            let snapshot = try read()
            report.keyValueKeys += snapshot.entries.count
            do throws(CKError) { try KeyValueEntries(snapshot.entries, limits: limits).check() } catch {
                report.damage.append("\(path) breaks a key-value limit: \(error.message); remove or shrink entries with `ckfs kv remove`")
            }
        } catch {
            report.damage.append(error.description)
        }
    }
}
