import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A store on a full disk (a small tmpfs): saves fail with an honest error, the mount daemon
/// keeps serving though its own log cannot grow, every acknowledged save stays readable, and
/// `fsck` tells a full disk from damage. Needs root to mount the tmpfs; CI runs as root.
@Suite(.serialized) struct FullDiskTests {
    static let canRun = geteuid() == 0 || ProcessInfo.processInfo.environment["CI"] != nil

    @Test(.enabled(if: canRun, "needs root to mount a tmpfs (CI runs as root)"))
    func aFullDiskIsAnHonestErrorNeverACrash() throws {
        let disk = MountFixture.base + "/full-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(CLIFixture.exec("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", disk]).status == 0)
        defer {
            _ = CLIFixture.exec("/bin/umount", ["-l", disk])
            try? FileManager.default.removeItem(atPath: disk)
        }
        let m = try MountFixture(demo: false, base: disk)
        let folder = m.mount + "/\(MountFixture.container)/private/_defaultZone/Big"
        #expect(m.sh("mkdir '\(folder)'").status == 0)
        // Through the mount until the disk is full, then many refused saves: each one logged
        // to mount.log, which is on the full disk too.
        let r = m.sh(#"""
        python3 - '\#(folder)' <<'PY'
        import errno, sys
        d = sys.argv[1]
        saved, first_error, refused = [], None, 0
        for i in range(2000):
            try:
                with open('%s/r%d.json' % (d, i), 'w') as f: f.write('{"fields": {"t": "%s"}}' % ('x' * 20000))
                if first_error is None: saved.append(i)
            except OSError as e:
                first_error = first_error or errno.errorcode[e.errno]
                refused += 1
                if refused >= 300: break
        print(len(saved), first_error, refused)
        PY
        """#)
        let out = r.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(r.status == 0 && out.count == 3, "\(r.stdout) \(r.stderr)")
        let saved = Int(out.first ?? "") ?? 0
        #expect(saved > 10 && out[1] == "ENOSPC" && out[2] == "300", "\(r.stdout)")
        // The daemon is still there and serves.
        #expect(kill(m.pid, 0) == 0, "the daemon died")
        #expect(m.sh("cat '\(folder)/r0.json'").stdout.contains("xxxx"), "\(m.mountLog.suffix(300))")
        // The CLI says the disk is full (the mount's lost+found, bounded, may have freed a
        // little room: saves go on until it is used up).
        var cli = m.cli(["record", "save"], input: #"{"recordType":"Big","recordName":"c0","fields":{"t":"\#(String(repeating: "y", count: 20000))"}}"#)
        for i in 1..<40 where cli.status == 0 {
            cli = m.cli(["record", "save"], input: #"{"recordType":"Big","recordName":"c\#(i)","fields":{"t":"\#(String(repeating: "y", count: 20000))"}}"#)
        }
        #expect(cli.status != 0 && cli.stderr.contains("quotaExceeded") && cli.stderr.contains("the disk holding the store is full"), "\(cli.stderr)")
        // Every acknowledged save is readable.
        let db = try m.database(.private)
        for i in 0..<saved {
            #expect((try? db.record(for: RecordID(recordName: "r\(i)")))?["t"] != nil, "r\(i) acknowledged but not readable")
        }
        // fsck: a full disk, not damage.
        let full = m.cli(["fsck"])
        #expect(full.status != 1 && !full.stderr.contains("damage:") && full.stdout.contains("0 damaged"), "\(full.stdout) \(full.stderr)")
        // Deletes still work on the full disk, through the mount and the CLI, and make room.
        let removed = m.sh("rm '\(folder)/r1.json' '\(folder)/r2.json' '\(folder)/r3.json'")
        #expect(removed.status == 0, "\(removed.stderr) \(m.mountLog.suffix(300))")
        let deleted = m.cli(["record", "delete", "r4"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        // With that room, saves work again and fsck is clean.
        let after = m.sh(#"python3 -c "open('\#(folder)/after.json', 'w').write('{\"fields\": {\"t\": \"room\"}}')""#)
        #expect(after.status == 0, "\(after.stderr) \(m.mountLog.suffix(300))")
        #expect((try? db.record(for: RecordID(recordName: "after")))?["t"] == .string("room"))
        for gone in ["r1", "r2", "r3", "r4"] { #expect((try? db.record(for: RecordID(recordName: gone))) == nil, "\(gone) still there") }
        let clean = m.cli(["fsck"])
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
    }
}
