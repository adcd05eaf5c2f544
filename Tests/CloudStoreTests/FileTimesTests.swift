import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A save must not look at the times of the files it writes. Where the file system
/// keeps multigrain times (ext4 since Linux 6.13), a file whose times were seen takes a
/// fine-grained time at its next change within the same clock tick, and that moves on the
/// coarse clock all other files' times are set from: the journal's time then changes at every
/// save, and each `fdatasync` of it must write its inode as well as its data (`perf stat -e
/// block:block_rq_issue`: 2 disk writes a save instead of 1).
///
/// How it is seen: a file's time set in the same tick as a fresh file's, both coarse, is that
/// file's to the nanosecond; a fine-grained one is later. Another process's fine-grained
/// time between the two writes spoils an attempt, so the test asks for a few clean attempts
/// out of many, where a file whose times were seen gives none. That the save path asks no
/// times of the files it writes is `SaveSyscallTests` (traced, so load cannot spoil it).
@Suite struct FileTimesTests {
    /// The modification time of `path` in nanoseconds (this looks at the times: call it last).
    func modified(_ path: String) throws -> Int64 {
        var st = stat()
        #expect(stat(path, &st) == 0, "stat \(path)")
        return Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }

    /// Writes `bytes` at the end of `path` (made if missing).
    func append(_ path: String, _ bytes: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        #expect(fd >= 0, "open \(path)")
        _ = bytes.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Whether this file system gives a fine-grained time to a file whose times were seen:
    /// where it does not, nothing here can be told apart.
    func timesAreMultigrain(_ dir: String) throws -> Bool {
        for attempt in 0..<5 {
            let file = dir + "/probe-\(attempt)", fresh = dir + "/fresh-probe-\(attempt)"
            append(file, "a")
            _ = try modified(file)
            append(fresh, "b")
            append(file, "c")
            if try modified(file) > modified(fresh) { return true }
        }
        return false
    }

    /// Linux 6.13 or later, where ext4 and tmpfs keep multigrain times.
    static var kernelHasMultigrainTimes: Bool {
        var u = utsname()
        guard uname(&u) == 0 else { return false }
        let release = withUnsafeBytes(of: u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard parts.count == 2 else { return false }
        return (parts[0], parts[1]) >= (6, 13)
    }

    /// Counts attempts, up to `attempts`, in which `clean` holds; stops at `wanted`.
    func cleanAttempts(_ attempts: Int, wanted: Int, _ clean: (Int) throws -> Bool) rethrows -> Int {
        var count = 0
        for attempt in 0..<attempts where count < wanted {
            if try clean(attempt) { count += 1 }
        }
        return count
    }

    @Test func statWithoutTimesLeavesAFileCoarse() throws {
        let dir = NSTemporaryDirectory() + "ckfs-times-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Elsewhere there is nothing to tell apart; on such a kernel (CI's) the probe must see it.
        guard try timesAreMultigrain(dir) else {
            #expect(!Self.kernelHasMultigrainTimes, "Linux 6.13+ but no multigrain times seen in \(dir)")
            return
        }
        let clean = try cleanAttempts(200, wanted: 3) { attempt in
            let file = dir + "/f-\(attempt)", fresh = dir + "/g-\(attempt)"
            append(file, "a")
            let fd = open(file, O_RDONLY)
            defer { close(fd) }
            guard case .success(let st?) = Syscall.stat(file), st.size == 1,
                  case .success(let fst) = Syscall.fstat(fd, path: file), fst.inode == st.inode else {
                Issue.record("stat of \(file) failed")
                return false
            }
            append(fresh, "b")
            append(file, "c")
            return try modified(file) == modified(fresh)
        }
        #expect(clean == 3, "a file stat-ed without times took fine-grained times")
    }
}
