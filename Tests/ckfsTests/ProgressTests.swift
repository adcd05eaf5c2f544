import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Long work (fsck, debug fill) shows how far it has come on a terminal (run here under script(1), which gives
/// the command a pseudo-terminal) and prints nothing of it into pipes.
@Suite struct ProgressTests {
    /// Runs `ckfs ARGS` on a pseudo-terminal; returns what the terminal showed.
    static func onTerminal(_ args: [String], store: String) -> CLIFixture.Output {
        let line = ([CLIFixture.binary] + args + ["--store", store, "--user", "alice"]).map { "'\($0)'" }.joined(separator: " ")
        var env = ProcessInfo.processInfo.environment
        env["TERM"] = "xterm"
        return CLIFixture.exec("/usr/bin/script", ["-qec", line, "/dev/null"], environment: env)
    }

    @Test func fillAndFsckShowProgressOnATerminalOnly() throws {
        let f = try CLIFixture()
        let shown = Self.onTerminal(["debug", "fill", "--count", "2000"], store: f.store)
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("\r\u{1B}[Ksaving: 2000 of 2000 (100%)"), "\(shown.stdout.debugDescription)")
        #expect(shown.stdout.contains("saved 2000"))

        let piped = f.run(["debug", "fill", "--count", "2000", "--overwrite"])
        #expect(piped.status == 0)
        #expect(piped.stderr.isEmpty, "progress went into a pipe: \(piped.stderr.debugDescription)")
        #expect(piped.stdout == "saved 2000\n")

        let checked = Self.onTerminal(["fsck"], store: f.store)
        #expect(checked.stdout.contains("\r\u{1B}[Kchecking records: 0, zone 1: 0 of 2000 record files"), "\(checked.stdout.debugDescription)")
        #expect(checked.stdout.contains("checked 1 zones, 2000 records"))
        let fsckPiped = f.run(["fsck"])
        #expect(fsckPiped.status == 0)
        #expect(!fsckPiped.stdout.contains("checking") && !fsckPiped.stderr.contains("checking"))
    }

    /// `--first` adds numbered records to a filled zone instead of saving over its first ones.
    @Test func fillAddsRecordsFromTheFirstNumberGiven() throws {
        let f = try CLIFixture()
        #expect(f.run(["debug", "fill", "--count", "30"]).status == 0)
        let added = f.run(["debug", "fill", "--count", "20", "--first", "30"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "saved 20, item-30 to item-49\n")
        let names = try #require(f.run(["record", "query", "--type", "Item", "--limit", "100"]).json?["records"]?.arrayValue)
            .compactMap { $0["recordName"]?.stringValue }
        #expect(Set(names) == Set((0..<50).map { "item-\($0)" }), "\(names.sorted())")
        let refused = f.run(["debug", "fill", "--count", "1", "--first=-1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--first must be 0 or more"), "\(refused.stderr)")
    }

    @Test func versionIsPrinted() {
        let r = CLIFixture.exec(CLIFixture.binary, ["--version"])
        #expect(r.status == 0)
        #expect(r.stdout.range(of: #"^ckfs \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, "\(r.stdout)")
    }
}
