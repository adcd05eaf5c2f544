import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudKit

/// 70,000 rejected writes to a key-value entry on a real mount do not grow the daemon.
///
/// A suite of its own, beside `KeyValueMountTests` rather than in its serialized line: it is
/// the longest of the mount tests, and in that line it would start after the others and run
/// alone at the end of `swift test`.
@Suite struct KeyValueMountMemoryTests {
    @Test func rejectedWritesDoNotGrowTheDaemon() throws {
        let m = try MountFixture()
        let path = m.mount + "/\(MountFixture.container)/keyvalue/theme.plist"
        // Sixteen kinds of bad text, each a different parse failure.
        let script = """
        import errno, sys
        bad = [b'<string>unclosed', b'<plist><foo/></plist>', b'<integer>12x</integer>', b'\\x00\\xff\\xfe junk',
               b'<dict><key>a</key></dict>', b'<data>!!</data>', b'<date>2026-99-99T00:00:00Z</date>', b'<array>' * 300,
               b'<real>one</real>', b'<string>&nope;</string>', b'<!DOCTYPE x [<!ENTITY a "b">]><string/>', b'bplist00\\x00',
               b'<dict><key>k</key><true/><key>k</key><true/></dict>', b'<string>a</string><string>b</string>',
               b'<?xml version="1.0" encoding="UTF-16"?><string/>', b'']
        n = int(sys.argv[1])
        refused = 0
        for i in range(n):
            try:
                with open("\(path)", "wb") as f:
                    f.write(bad[i % (len(bad) - 1)])
            except OSError as e:
                assert e.errno == errno.EINVAL, e
                refused += 1
        print(refused)
        """
        func run(_ n: Int) -> Int {
            let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script, String(n)])
            return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        func rss() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(m.pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        // Warm up: caches, the log, lost+found, malloc's arenas (measured: flat after about 20,000).
        #expect(run(20_000) == 20_000)
        let before = rss()
        #expect(run(25_000) == 25_000)
        let middle = rss()
        #expect(run(25_000) == 25_000)
        let after = rss()
        print("daemon RssAnon: \(before) kB after 20,000 rejected writes, \(middle) kB after 25,000 more, \(after) kB after 50,000 more")
        // Foundation's parser leaks about 600 bytes a failure: 30 MB over these 50,000; the
        // bound catches a leak of 126 bytes a failure or more. What moves without a leak is the
        // stacks and malloc arenas of the loop's worker threads (up to 16), which come and go
        // with the machine's load, a few MB at most: the bound leaves room for them.
        #expect(before > 0 && after - before < 6_144, "the daemon grew from \(before) kB to \(after) kB")
        #expect(try KeyValueStore(store: Store.open(at: m.store), user: MountFixture.user, synchronizeEvery: nil).string(forKey: "theme") == "dark", "no rejected write changed the entry")
    }
}
