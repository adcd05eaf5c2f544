import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The save path asks no times of the files it writes (the log, the lock file, the
/// journal, record files). Where times are multigrain (ext4 since Linux 6.13) a file whose
/// times were seen takes a fine-grained time at its next change, which moves on the clock
/// every other file's times are set from: then the journal's inode changes at every save and
/// each `fdatasync` of it writes two blocks, not one (`FileTimesTests` shows the kernel's
/// side). Traced with strace on the real binary, so a busy machine cannot spoil it.
@Suite struct SaveSyscallTests {
    /// Whether one traced stat-family call asks for times: every classic `stat`, and `statx`
    /// with a mask that names them.
    static func asksTimes(_ call: Substring) -> Bool {
        guard call.hasPrefix("statx(") else { return true }
        let mask = call.split(separator: ",").dropFirst(3).first ?? ""
        return ["MTIME", "CTIME", "BASIC_STATS", "STATX_ALL"].contains { mask.contains($0) }
    }

    static func tracer() throws -> String {
        let strace = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(strace, "strace is needed (apt-get install strace; .ci/run installs it)")
    }

    @Test func savesAskNoTimesOfTheFilesTheyWrite() throws {
        let tracer = try Self.tracer()
        let cli = try CLIFixture()
        let trace = cli.store + ".strace"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let r = CLIFixture.exec(tracer, ["-f", "-qq", "-y", "-e", "trace=%stat,%lstat,%fstat,statx", "-o", trace,
                                         CLIFixture.binary, "debug", "write-loop", "--count", "30",
                                         "--store", cli.store, "--user", "alice"])
        try #require(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        let zone = "/zones/" + ZoneID.defaultZoneName + "/"
        let written = ["log.jsonl", "lock", "journal", "records/"].map { zone + $0 }
        var checked = 0
        var offending: [Substring] = []
        for line in lines where !line.contains("resumed>") {
            // "PID call(args…" with -f, the PID padded with spaces to a width.
            guard let space = line.firstIndex(of: " ") else { continue }
            let call = line[space...].drop { $0 == " " }
            let head = call.prefix { $0 != "{" } // the arguments, not the result's fields
            guard written.contains(where: { head.contains($0) }) else { continue }
            checked += 1
            if Self.asksTimes(head) { offending.append(line) }
        }
        #expect(checked >= 30, "the trace shows \(checked) stat calls of the zone's files: \(lines.prefix(5))")
        #expect(offending.isEmpty, "stat calls that ask for times:\n\(offending.prefix(3).map { $0.prefix(300) }.joined(separator: "\n"))")
    }

    /// A batch of new records puts each file in place with one link (an unnamed file,
    /// written first), not a temp file and a rename; saving over them renames temp files as
    /// before. Every file holds its record.
    @Test func newRecordFilesAreLinkedAndRewrittenOnesRenamed() throws {
        let tracer = try Self.tracer()
        let cli = try CLIFixture()
        func traced(_ args: [String]) throws -> (links: Int, renames: Int, temps: Int) {
            let trace = cli.store + ".strace"
            defer { try? FileManager.default.removeItem(atPath: trace) }
            let r = CLIFixture.exec(tracer, ["-f", "-qq", "-e", "trace=linkat,rename,renameat,renameat2,openat", "-o", trace,
                                             CLIFixture.binary] + args + ["--store", cli.store, "--user", "alice"])
            try #require(r.status == 0, "\(r.stderr)")
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("/records/") }
            return (lines.filter { $0.contains("linkat(") && $0.contains(".json\"") }.count,
                    lines.filter { $0.contains("rename") && $0.contains(".json\"") }.count,
                    lines.filter { $0.contains("openat(") && $0.contains(FileWriter.tempPrefix) }.count)
        }
        let created = try traced(["debug", "fill", "--count", "800"])
        #expect(created.links == 800 && created.renames == 0 && created.temps == 0, "\(created)")
        let rewritten = try traced(["debug", "fill", "--count", "400", "--overwrite"])
        #expect(rewritten.links == 0 && rewritten.renames == 400 && rewritten.temps == 400, "\(rewritten)")
        let records = try FileManager.default.subpathsOfDirectory(atPath: cli.store).filter { $0.contains("/records/") && $0.hasSuffix(".json") }
        #expect(records.count == 800)
        for path in records {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.store + "/" + path))) as? [String: Any]
            #expect(object?["recordName"] as? String == String(path.split(separator: "/").last!.dropLast(5)), "\(path)")
        }
    }
}
