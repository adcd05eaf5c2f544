import Foundation
import Testing
import TestSupport
@testable import CloudStore
@testable import CloudStoreBench

/// `ckfs bench --quick` once, as CI's smoke test of the benchmarks: every row is
/// measured, on both sides, and the ratio is what the figures say. No thresholds: machines
/// are noisy; the numbers live in docs/Performance.md. The zones are the smallest `--records`
/// allows, as the rows' code is the same at any size and this test is the suite's longest.
@Suite struct BenchTests {
    @Test func quickBenchMeasuresEveryRowAgainstItsBaseline() throws {
        let dir = NSTemporaryDirectory() + "ckfs-bench-test-" + UUID().uuidString
        let r = CLIFixture.exec(CLIFixture.binary, ["bench", "--quick", "--records", "2000", "--json", "--directory", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try #require(r.json?.arrayValue)
        #expect(rows.compactMap { $0["id"]?.stringValue }
            == ["8", "1", "8b", "2", "8c", "2b", "6a", "6a", "6b", "6b", "6c", "6c", "6d", "6d", "6e", "6e", "6f", "6f", "3", "4a", "4b", "5a", "5b", "5c", "5d", "5e", "5f", "5g", "7a", "7b", "7c",
                "9a", "9b", "9c", "9d", "9e", "9f", "9g", "9h", "9i", "9j", "9k", "9l", "10a", "10b", "10c", "10d", "10e", "10f", "10g", "10h", "10i", "10j", "10k", "10l",
                "11a", "11b", "11c", "11d", "11e", "11f"])
        for row in rows {
            let ckfs = try #require(row["ckfs"]?.doubleValue), baseline = try #require(row["baseline"]?.doubleValue)
            let ratio = try #require(row["ratio"]?.doubleValue)
            #expect(ckfs > 0 && baseline > 0, "\(row)")
            #expect(abs(ratio - baseline / ckfs) < 1e-9 * max(1, ratio), "ratio is baseline ÷ ckfs: \(row)")
            #expect(row["baselineName"]?.stringValue?.isEmpty == false)
        }
        // 6f is the batch of 6b set against the file floor of 6e, size by size.
        func figures(_ id: String, _ key: String) -> [Double] { rows.filter { $0["id"]?.stringValue == id }.compactMap { $0[key]?.doubleValue } }
        #expect(figures("6f", "ckfs") == figures("6b", "ckfs") && figures("6f", "baseline") == figures("6e", "ckfs"), "\(rows)")
        #expect(figures("6e", "baseline") == figures("6e", "ckfs").first.map { [$0, $0] }, "6e is set against its smallest size")
        #expect(!FileManager.default.fileExists(atPath: dir), "the bench removes what it made")
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        #expect(!mounts.contains(dir), "the bench unmounts what it mounted")
        let bad = CLIFixture.exec(CLIFixture.binary, ["bench", "--records", "1999"])
        #expect(bad.status == 64 && bad.stderr.contains("--records must be at least 2,000"), "\(bad.stderr)")
        let unknown = CLIFixture.exec(CLIFixture.binary, ["bench", "--rows", "1,9z"])
        #expect(unknown.status == 64 && unknown.stderr.contains("no row '9z'"), "\(unknown.stderr)")
        let one = CLIFixture.exec(CLIFixture.binary, ["bench", "--quick", "--json", "--rows", "8", "--directory", dir])
        #expect(try #require(one.json?.arrayValue).compactMap { $0["id"]?.stringValue } == ["8"])
    }

    /// Before the rows that write record files the bench times 200 file creations, and warns
    /// when the file system is in the state that makes those rows measure it instead of ckfs.
    @Test func theBenchSaysHowFastFilesAreCreatedBeforeTheSaveRows() throws {
        let dir = NSTemporaryDirectory() + "ckfs-bench-probe-" + UUID().uuidString
        let r = CLIFixture.exec(CLIFixture.binary, ["bench", "--quick", "--rows", "8c", "--directory", dir])
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stderr.split(separator: "\n").first { $0.hasPrefix("bench: file creation now: ") })
        let figure = line.dropFirst("bench: file creation now: ".count).prefix { $0 != " " }
        #expect((Double(figure) ?? 0) > 0, "\(line)")
        #expect(r.stdout.contains("8c  the file floor"), "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir))
        let fsync = CLIFixture.exec(CLIFixture.binary, ["bench", "--quick", "--rows", "8", "--directory", dir])
        #expect(!fsync.stderr.contains("file creation now"), "no probe for rows that write no files")

        #expect(Bench.fileSystemWarning(secondsPerFile: 40e-6) == nil)
        let warning = try #require(Bench.fileSystemWarning(secondsPerFile: 1_180e-6))
        #expect(warning.contains("1180 µs") && warning.contains("some minutes after any large deletion"), "\(warning)")
    }

    /// A crashed server's report keeps the line Swift's backtracer starts with and the
    /// backtrace of the thread that crashed, which it lists after the threads before it.
    @Test func aServerCrashReportKeepsTheCrashedThread() {
        let threads = (0..<12).map { "Thread \($0) \"worker\":\n\n  0 futex_wait in libc.so.6\n  1 [ra] park\n" }.joined(separator: "\n")
        let text = "listening\n*** Program crashed: Bad pointer dereference at 0x7f0 ***\n\nPlatform: x86_64 Linux\n\n" + threads
            + "\nThread 12 \"oot.default-qos\" crashed:\n\n  0 __memcpy_avx512_unaligned_erms in libc.so.6\n  1 [ra] Syscall.forEachName(in:_:)\n\nThread 13:\n  0 epoll_wait\n"
        let digest = Bench.Server.digest(text)
        #expect(digest.contains("Program crashed: Bad pointer dereference"))
        #expect(digest.contains("Thread 12 \"oot.default-qos\" crashed:") && digest.contains("Syscall.forEachName"), "\(digest)")
        #expect(!digest.contains("futex_wait"), "\(digest)")
        #expect(Bench.Server.digest("a\nb\nended badly").hasSuffix("ended badly"))
    }
}
