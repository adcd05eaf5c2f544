import Foundation

/// One user's notifications in the file backend: `notifications.jsonl` in the user's private
/// folder.
///
/// The first line names the log's epoch (`{"epoch": "…", "format": 1}`); each later line is
/// a notification or a read mark (`{"markRead": [ids]}`), with a sequence number. Appends
/// happen under an exclusive `flock` on `notifications.lock`, one `write` and one
/// `fdatasync` for a batch; a torn last line (a writer killed mid-append) is cut off by the
/// next writer and ignored by readers. Tokens are `<epoch>-<seq>`; a token of another epoch
/// (the log was deleted and started again) is `changeTokenExpired`.
package final class NotificationLog: NotificationStorage {
    package let path: String
    let lockPath: String
    let directory: String
    private let writer: FileWriter

    /// Read marks are written this many IDs to a line, to keep lines short.
    static let idsPerMarkLine = 100

    init(directory: String, writer: FileWriter) {
        self.directory = directory
        self.path = directory + "/notifications.jsonl"
        self.lockPath = directory + "/notifications.lock"
        self.writer = writer
    }

    // MARK: Writing

    /// Appends notifications durably; they are kept when this returns.
    package func append(_ notifications: [CloudNotification]) throws(CKError) {
        guard !notifications.isEmpty else { return }
        try appendLines(notifications.map(\.json))
    }

    /// Marks notifications read. IDs that are not in the log are ignored.
    package func markRead(_ ids: [String]) throws(CKError) {
        guard !ids.isEmpty else { return }
        var lines: [JSONValue] = []
        var rest = ids[...]
        while !rest.isEmpty {
            lines.append(.object(["markRead": .array(rest.prefix(Self.idsPerMarkLine).map { .string($0) }), "time": .int(Clock.milliseconds())]))
            rest = rest.dropFirst(Self.idsPerMarkLine)
        }
        try appendLines(lines)
    }

    private func appendLines(_ lines: [JSONValue]) throws(CKError) {
        try writer.makeDirectories(directory)
        try withFileLock(lockPath) { () throws(CKError) in
            let fd = try Syscall.open(path, Posix.O_RDWR | Posix.O_CREAT | Posix.O_APPEND, mode: 0o600).orThrow(.internalError, "cannot open \(path)")
            defer { Syscall.close(fd) }
            let size = try Syscall.fstat(fd, path: path).orThrow(.internalError, "cannot stat \(path)").size
            var out: [UInt8] = []
            var seq: Int64
            if size == 0 {
                out += JSONWriter.compact(.object(["epoch": .string(Names.randomEpoch()), "format": .int(1)])) + [0x0A]
                seq = 0
            } else {
                let tail = try lastLine(fd, size: size)
                if tail.end < size {
                    // A writer was killed mid-line: cut the torn part off before appending.
                    try Syscall.ftruncate(fd, tail.end, path: path).orThrow(.internalError, "cannot repair \(path)")
                }
                seq = tail.json?["seq"]?.int64Value ?? 0
            }
            for line in lines {
                seq += 1
                guard case .object(var members) = line else { continue }
                members["seq"] = .int(seq)
                out += JSONWriter.compact(.object(members)) + [0x0A]
            }
            try writer.io.write(fd, out, path: path).orThrow(.internalError, "cannot append to \(path)")
            try writer.io.sync(fd, path: path, dataOnly: true).orThrow(.internalError, "cannot sync \(path)")
            if size == 0 { try writer.syncDirectory(directory) }
        }
    }

    /// The last whole line of the file and where it ends (past its newline).
    private func lastLine(_ fd: Int32, size: Int64) throws(CKError) -> (json: JSONValue?, end: Int64) {
        var window: Int64 = 16 * 1024
        while true {
            let start = max(0, size - window)
            let bytes = try Syscall.pread(fd, count: Int(size - start), offset: start, path: path).orThrow(.internalError, "cannot read \(path)")
            guard let lastNewline = bytes.lastIndex(ofByte: 0x0A) else {
                if start == 0 { return (nil, 0) }
                window *= 4
                continue
            }
            let lineStart = bytes[..<lastNewline].lastIndex(ofByte: 0x0A).map { $0 + 1 }
            if lineStart == nil && start > 0 {
                window *= 4
                continue
            }
            let line = Array(bytes[(lineStart ?? 0)..<lastNewline])
            return (try? JSONParser.parse(line), start + Int64(lastNewline) + 1)
        }
    }

    // MARK: Reading

    /// Changes whenever the log does (its inode, size and times): cheap to poll.
    package func version() throws(CKError) -> String {
        guard let st = try Syscall.stat(path, times: true).orThrow(.internalError, "cannot stat \(path)") else { return "none" }
        return "\(st.inode)-\(st.size)-\(st.modifiedNanos)-\(st.changedNanos)"
    }

    /// What the log holds: its epoch, notifications with their sequence numbers, read IDs,
    /// and how many lines could not be read.
    struct Contents {
        var epoch: String?
        var notifications: [(seq: Int64, notification: CloudNotification)] = []
        var read: Set<String> = []
        var lastSeq: Int64 = 0
        var badLines: [Int] = []
    }

    func contents() throws(CKError) -> Contents {
        let log = try lines()
        var out = Contents(epoch: log.epoch, badLines: log.badLines)
        for entry in log.entries {
            switch entry {
            case .notification(let seq, let n):
                out.notifications.append((seq, n))
                out.lastSeq = max(out.lastSeq, seq)
            case .markRead(let seq, let ids, _):
                out.read.formUnion(ids)
                out.lastSeq = max(out.lastSeq, seq)
            }
        }
        return out
    }

    /// Every whole line of the log, parsed: the epoch (the first line's), the notifications
    /// and read marks in order, and the numbers of the lines that are neither.
    private func lines() throws(CKError) -> (epoch: String?, entries: [NotificationSnapshot.Entry], badLines: [Int]) {
        guard let bytes = try Syscall.readFile(path).orThrow(.internalError, "cannot read \(path)") else { return (nil, [], []) }
        var epoch: String?
        var entries: [NotificationSnapshot.Entry] = []
        var badLines: [Int] = []
        var lineNumber = 0
        var start = 0
        while let newline = bytes[start...].firstIndex(ofByte: 0x0A) {
            lineNumber += 1
            let line = bytes[start..<newline]
            start = newline + 1
            guard let json = try? JSONParser.parse(Array(line)) else {
                badLines.append(lineNumber)
                continue
            }
            if lineNumber == 1, let e = json["epoch"]?.stringValue {
                epoch = e
                continue
            }
            guard let seq = json["seq"]?.int64Value else {
                badLines.append(lineNumber)
                continue
            }
            if let ids = json["markRead"]?.arrayValue {
                entries.append(.markRead(seq: seq, ids: ids.compactMap(\.stringValue), time: json["time"]?.int64Value ?? 0))
            } else if let n = try? CloudNotification(json: json) {
                entries.append(.notification(seq: seq, n))
            } else {
                badLines.append(lineNumber)
            }
        }
        return (epoch, entries, badLines)
    }

    /// Notifications after `token` (nil: all kept), except those `device` caused itself.
    package func changes(since token: NotificationToken?, excludingDevice device: String?) throws(CKError) -> NotificationChanges {
        let log = try contents()
        let epoch = log.epoch ?? ""
        var after: Int64 = 0
        if let token {
            guard let parts = token.parts else {
                throw CKError(.invalidArguments, "\(token.text) is not a notification token; pass a token a notification fetch gave")
            }
            // A token of the empty log (epoch "") stays good when the first notification arrives.
            guard parts.epoch == epoch || parts.epoch.isEmpty else {
                throw CKError(.changeTokenExpired, "the notification token is from an earlier notification log (\(path) was started again); fetch again without a token")
            }
            after = parts.seq
        }
        var found: [CloudNotification] = []
        var badge = 0
        for (seq, n) in log.notifications {
            var n = n
            n.isRead = log.read.contains(n.notificationID)
            n.token = NotificationToken(epoch: epoch, seq: seq)
            if n.shouldBadge && !n.isRead { badge += 1 }
            if seq > after && n.originDeviceID != device { found.append(n) }
        }
        return NotificationChanges(notifications: found, token: NotificationToken(epoch: epoch, seq: max(after, log.lastSeq)), badge: badge)
    }

    // MARK: Copying

    /// The log's lines as they are: a line that cannot be read is an error naming it, since a
    /// copy must not drop what it cannot read.
    package func snapshot() throws(CKError) -> NotificationSnapshot? {
        let log = try lines()
        if let bad = log.badLines.first {
            throw CKError(.internalError, "\(path), line \(bad), is not a notification; fix or delete the line (`ckfs fsck` lists such lines), then copy again")
        }
        guard log.epoch != nil || !log.entries.isEmpty else { return nil }
        return NotificationSnapshot(epoch: log.epoch ?? "", entries: log.entries)
    }

    /// Written as one file: the epoch line, then each entry under its own sequence number.
    package func restore(_ snapshot: NotificationSnapshot) throws(CKError) {
        try writer.makeDirectories(directory)
        try withFileLock(lockPath) { () throws(CKError) in
            if case .success(let st?) = Syscall.stat(path), st.size > 0 {
                throw CKError(.invalidArguments, "\(path) holds notifications already; they are restored only where there are none")
            }
            var out = JSONWriter.compact(.object(["epoch": .string(snapshot.epoch), "format": .int(1)])) + [0x0A]
            for entry in snapshot.entries {
                let line: JSONValue
                switch entry {
                case .notification(let seq, let n):
                    guard case .object(var members) = n.json else { continue }
                    members["seq"] = .int(seq)
                    line = .object(members)
                case .markRead(let seq, let ids, let time):
                    line = .object(["markRead": .array(ids.map { .string($0) }), "time": .int(time), "seq": .int(seq)])
                }
                out += JSONWriter.compact(line) + [0x0A]
            }
            try writer.replace(path, with: out, durable: true)
        }
    }

    // MARK: Checking

    /// For `ckfs fsck`: cuts a torn last line off (as the next append would) and reports
    /// lines that cannot be read.
    func check(_ report: inout CheckReport) {
        guard case .success(let st?) = Syscall.stat(path) else { return }
        do throws(CKError) {
            try withFileLock(lockPath) { () throws(CKError) in
                let fd = try Syscall.open(path, Posix.O_RDWR).orThrow(.internalError, "cannot open \(path)")
                defer { Syscall.close(fd) }
                let tail = try lastLine(fd, size: st.size)
                if tail.end < st.size {
                    try Syscall.ftruncate(fd, tail.end, path: path).orThrow(.internalError, "cannot repair \(path)")
                    report.repaired.append("\(path): cut off a torn last line (\(st.size - tail.end) bytes) left by a writer that was killed")
                }
            }
            let log = try contents()
            report.notifications += log.notifications.count
            if !log.badLines.isEmpty {
                report.damage.append("\(path): lines \(log.badLines.map(String.init).joined(separator: ", ")) are not notifications; fix or delete those lines (readers skip them)")
            }
        } catch {
            report.damage.append(error.message)
        }
    }
}
