import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs mount -o` and `contrib/mount.fuse.ckfs`, the helper mount(8) runs for
/// `mount -t fuse.ckfs` and fstab lines, run here directly as mount(8) runs it; and the
/// daemon's log levels. NewcomerTests runs the installed helper through mount(8) itself.
@Suite(.serialized) struct MountHelperTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let helper = packageRoot + "/contrib/mount.fuse.ckfs"

    /// A store with two containers and an empty mount point, under the mount tests' base.
    struct Place {
        let root = MountFixture.base + "/helper-" + UUID().uuidString.prefix(8)
        var store: String { root + "/store" }
        var dir: String { root + "/M" }

        init() throws {
            try FileManager.default.createDirectory(atPath: root + "/M", withIntermediateDirectories: true)
            for args in [["init"], ["zone", "create", "Work", "--container", "iCloud.com.example.other"]] {
                let r = CLIFixture.exec(CLIFixture.binary, args + ["--store", root + "/store"])
                guard r.status == 0 else { throw CKError(.internalError, "\(args): \(r.stderr)") }
            }
        }

        /// Runs the helper as mount(8) does, with the ckfs under test first on PATH.
        func helper(_ args: [String]) -> CLIFixture.Output {
            let bin = URL(fileURLWithPath: CLIFixture.binary).deletingLastPathComponent().path
            var env = ProcessInfo.processInfo.environment
            env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
            return CLIFixture.exec(MountHelperTests.helper, [store, dir] + args, environment: env)
        }

        var mountOptions: String? {
            let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
            for line in mounts.split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                if fields.count > 3 && fields[1] == dir { return fields[3] }
            }
            return nil
        }

        func unmount() { _ = CLIFixture.exec(CLIFixture.binary, ["unmount", dir]) }

        func remove() {
            unmount()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    @Test func theHelperTurnsMountOptionsIntoAMount() throws {
        let p = try Place()
        defer { p.remove() }
        // mount(8) passes its own options along with ckfs's; they change nothing.
        let r = p.helper(["-n", "-o", "rw,noauto,nofail,_netdev,x-systemd.automount,user=nobody,container=iCloud.com.example.other"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty, "a mount helper prints nothing when it succeeds: \(r.stdout)")
        let opts = try #require(p.mountOptions, "not mounted")
        #expect(opts.hasPrefix("rw,"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: p.dir).sorted() == ["iCloud.com.example.other", "lost+found"])
        // The mount works: a record written through it is read back by the CLI.
        let zone = p.dir + "/iCloud.com.example.other/private/Work"
        try FileManager.default.createDirectory(atPath: zone + "/Note", withIntermediateDirectories: true)
        try #"{"fields":{"title":"from the helper's mount"}}"#.write(toFile: zone + "/Note/n1.json", atomically: false, encoding: .utf8)
        let fetched = CLIFixture.exec(CLIFixture.binary, ["record", "fetch", "n1", "--zone", "Work", "--container", "iCloud.com.example.other", "--store", p.store])
        #expect(fetched.stdout.contains("from the helper's mount"), "\(fetched.stderr)")
        p.unmount()

        let ro = p.helper(["-o", "ro,allow_other"])
        #expect(ro.status == 0, "\(ro.stderr)")
        let roOpts = try #require(p.mountOptions, "not mounted")
        #expect(roOpts.hasPrefix("ro,") && roOpts.contains("allow_other"), "\(roOpts)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: p.dir).sorted() == ["iCloud.com.example.other", "iCloud.local.ckfs", "lost+found"])
        #expect(!FileManager.default.createFile(atPath: p.dir + "/iCloud.local.ckfs/private/_defaultZone/x.json", contents: Data("{}".utf8)))
    }

    @Test func unknownOptionsAreRefusedByName() throws {
        let p = try Place()
        defer { p.remove() }
        for (args, named) in [(["-o", "allow_other,bogus"], "bogus"), (["-o", "environment=staging"], "development or production"),
                              (["--weird"], "--weird")] {
            let r = p.helper(args)
            #expect(r.status != 0)
            #expect(r.stderr.contains(named), "\(args): \(r.stderr)")
            #expect(p.mountOptions == nil, "\(args) mounted")
        }
        let unknown = p.helper(["-o", "container=iCloud.com.example.nosuch"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no container iCloud.com.example.nosuch"), "\(unknown.stderr)")
        #expect(p.mountOptions == nil)
        // mount -f (pretend) asks the helper to do nothing.
        #expect(p.helper(["-f", "-o", "ro"]).status == 0)
        #expect(p.mountOptions == nil)
        let direct = CLIFixture.exec(CLIFixture.binary, ["mount", "-o", "ro,nosuch=1", p.dir, "--store", p.store])
        #expect(direct.status != 0 && direct.stderr.contains("nosuch=1: not a ckfs mount option"), "\(direct.stderr)")
    }

    @Test func theDaemonLogsAtTheLevelAsked() throws {
        for (level, wantsDebug) in [(nil as String?, false), ("debug", true)] {
            let m = try MountFixture(demo: true, mountArgs: level.map { ["--log-level", $0] } ?? [])
            #expect(m.sh("printf '{\"fields\":{\"title\":\"logged\"}}' > '\(m.privateNotes)/Note/logged.json'").status == 0)
            let lines = m.mountLog.split(separator: "\n")
            #expect(lines.contains { $0.contains(" info ") && $0.contains("mounted \(m.store) at \(m.mount)") }, "\(lines)")
            let saved = lines.contains { $0.contains(" debug ") && $0.contains("saved \(m.privateNotes)/Note/logged.json") }
            #expect(saved == wantsDebug, "level \(level ?? "default"): \(lines)")
            // Every line is one event: a time, a level, the logger (the mount's or the engine's,
            // such as ckfs.index), the message.
            for line in lines where line.hasPrefix("20") {
                #expect(line.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S* (trace|debug|info|notice|warning|error|critical) ckfs\.[a-z]+ ?:"#, options: .regularExpression) != nil, "\(line)")
            }
        }
    }

    @Test func aRefusedSaveIsLoggedAsANotice() throws {
        let m = try MountFixture(demo: true)
        // cp reports the refusal, which comes at close (a shell's printf does not).
        #expect(m.sh("printf '{broken' > bad.json && cp bad.json '\(m.privateNotes)/Note/bad.json'").status != 0)
        #expect(m.mountLog.split(separator: "\n").contains { $0.contains(" notice ") && $0.contains("refused save of \(m.privateNotes)/Note/bad.json") }, "\(m.mountLog)")
    }
}
