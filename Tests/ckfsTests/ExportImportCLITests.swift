import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs export` and `ckfs import` as people run them, checked with tools of others: `diff -r`
/// compares two exports, `tar` carries one to another folder, Python's `json` reads it, and a
/// change token printed by `ckfs changes` before the move is good after it.
@Suite struct ExportImportCLITests {
    static func shell(_ script: String) -> CLIFixture.Output { CLIFixture.exec("/bin/sh", ["-c", script]) }

    @Test func exportTarImportAndExportAgainGiveTheSameBytes() throws {
        let cli = try CLIFixture()
        try #require(cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"a","fields":{"text":"first"}}"#).status == 0)
        try #require(cli.run(["zone", "create", "Work"]).status == 0)
        try #require(cli.run(["record", "save", "--zone", "Work"], input: #"{"recordType":"Task","recordName":"t1","fields":{"done":0}}"#).status == 0)
        try #require(cli.run(["kv", "set", "theme", "dark"]).status == 0)
        let before = cli.run(["changes"])
        let token = try #require(before.json?["token"]?.stringValue, "\(before.stdout) \(before.stderr)")
        try #require(cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"b","fields":{"text":"after the token"}}"#).status == 0)

        let base = NSTemporaryDirectory() + "ckfs-move-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let exported = CLIFixture.exec(CLIFixture.binary, ["export", base + "/first", "--store", cli.store])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.hasPrefix("exported 1 containers, "), "\(exported.stdout)")

        // Carried with tar, as a backup is; imported into a new store; exported again.
        let carried = Self.shell("cd '\(base)' && tar cf first.tar first && mkdir carried && tar xf first.tar -C carried")
        try #require(carried.status == 0, "\(carried.stderr)")
        let moved = CLIFixture(adopting: base + "/moved")
        let imported = CLIFixture.exec(CLIFixture.binary, ["import", base + "/carried/first", "--store", moved.store])
        #expect(imported.status == 0, "\(imported.stderr)")
        let again = CLIFixture.exec(CLIFixture.binary, ["export", base + "/second", "--store", moved.store])
        #expect(again.status == 0, "\(again.stderr)")
        let diff = Self.shell("diff -r '\(base)/first' '\(base)/second'")
        #expect(diff.status == 0, "the two exports differ: \(diff.stdout)")
        #expect(moved.run(["fsck"]).status == 0)

        // Python reads a record of the export with json alone.
        let python = Self.shell("""
            python3 -c "import json, glob; print(json.load(open(glob.glob('\(base)/first/*/development/private/*/zones/Work/records/t1.json')[0]))['recordType'])"
            """)
        #expect(python.stdout == "Task\n", "\(python.stderr)")

        // The token printed before the move gives what changed since, and no more.
        let since = moved.run(["changes", "--since", token])
        #expect(since.status == 0, "\(since.stderr)")
        #expect(since.json?["records"]?.arrayValue?.compactMap { $0["recordName"]?.stringValue } == ["b"], "\(since.stdout)")
        #expect(moved.run(["kv", "get", "theme"]).stdout.contains("dark"))
    }

    /// kill -9 part way through an export: the folder it leaves is refused by `ckfs import`
    /// (and by anything that opens it) with what to do, and a rerun into an empty folder
    /// exports everything.
    @Test func anExportKilledPartWayIsRefusedAndARerunFinishes() throws {
        let cli = try CLIFixture()
        try #require(cli.run(["debug", "fill", "--count", "3000"]).status == 0)
        let base = NSTemporaryDirectory() + "ckfs-killed-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let child = try Spawned(CLIFixture.binary, ["export", base + "/export", "--store", cli.store])
        while child.isRunning && !FileManager.default.fileExists(atPath: base + "/export/ckfs-store.json") { usleep(200) }
        child.signal(SIGKILL)
        _ = child.wait()
        try #require(FileManager.default.fileExists(atPath: base + "/export/copy-unfinished"), "the export ended before the kill; fill more records")
        let refused = CLIFixture.exec(CLIFixture.binary, ["import", base + "/export", "--store", base + "/moved"])
        #expect(refused.status == 1 && refused.stderr.contains("did not finish") && refused.stderr.contains("remove the folder"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: base + "/moved"), "nothing was made of the target")
        let fsck = CLIFixture.exec(CLIFixture.binary, ["fsck", "--store", base + "/export"])
        #expect(fsck.status == 1 && fsck.stderr.contains("did not finish"), "\(fsck.stderr)")

        try FileManager.default.removeItem(atPath: base + "/export")
        #expect(CLIFixture.exec(CLIFixture.binary, ["export", base + "/export", "--store", cli.store]).status == 0)
        let imported = CLIFixture.exec(CLIFixture.binary, ["import", base + "/export", "--store", base + "/moved"])
        #expect(imported.stdout.contains("3000 records"), "\(imported.stdout) \(imported.stderr)")
        let moved = CLIFixture(adopting: base + "/moved")
        #expect(try moved.database().recordCount() == 3000)
    }

    /// Exports 3,000 records of container `container` (user alice's private zone) to `folder`:
    /// enough for an import to be caught part way.
    static func exportThousands(of container: String, to folder: String) throws {
        let source = try CLIFixture()
        try #require(source.run(["debug", "fill", "--count", "3000", "--container", container]).status == 0)
        try #require(CLIFixture.exec(CLIFixture.binary, ["export", folder, "--store", source.store, "--container", container]).status == 0)
    }

    /// kill -9 part way through an import of a container into a store that holds another:
    /// the store keeps working, the half-made container is refused with what to do (and fsck
    /// says so), and a rerun makes it anew, whole.
    @Test func anImportKilledPartWayIsRefusedAndARerunFinishes() throws {
        let notes = "iCloud.com.example.notes"
        let base = NSTemporaryDirectory() + "ckfs-killed-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        try Self.exportThousands(of: notes, to: base + "/export")
        let target = try CLIFixture()
        try #require(target.run(["record", "save"], input: #"{"recordName": "kept", "recordType": "Note", "fields": {"text": "before the import"}}"#).status == 0)

        let container = target.store + "/" + notes
        let child = try Spawned(CLIFixture.binary, ["import", base + "/export", "--store", target.store])
        while child.isRunning && !FileManager.default.fileExists(atPath: container + "/development") { usleep(200) }
        child.signal(SIGKILL)
        _ = child.wait()
        try #require(FileManager.default.fileExists(atPath: container + "/copy-unfinished"), "the import ended before the kill; fill more records")

        let refused = target.run(["record", "fetch", "item-0", "--container", notes])
        #expect(refused.status != 0 && refused.stderr.contains("an import of it stopped part way") && refused.stderr.contains("run it again"), "\(refused.stderr)")
        let kept = target.run(["record", "fetch", "kept"])
        #expect(kept.status == 0 && kept.stdout.contains("before the import"), "the store's own container is untouched: \(kept.stdout) \(kept.stderr)")
        let fsck = target.run(["fsck"], user: nil)
        #expect(fsck.status == 1 && fsck.stderr.contains("stopped part way"), "\(fsck.stdout) \(fsck.stderr)")

        let rerun = CLIFixture.exec(CLIFixture.binary, ["import", base + "/export", "--store", target.store])
        #expect(rerun.status == 0 && rerun.stdout.contains("3000 records"), "\(rerun.stdout) \(rerun.stderr)")
        let fetched = target.run(["record", "fetch", "item-2999", "--container", notes])
        #expect(fetched.status == 0 && fetched.stdout.contains("item-2999"), "\(fetched.stdout) \(fetched.stderr)")
        #expect(try Store.open(at: target.store).container(notes).database(.private, caller: Caller(userName: "alice")).recordCount() == 3000)
        let clean = target.run(["fsck"], user: nil)
        #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
    }

    /// A second import of a container while a first is at work on it (here stopped with
    /// SIGSTOP, its lock held) is refused and takes nothing of the first's; fsck says the
    /// container is being imported, not damaged; the first then finishes whole.
    @Test func aSecondImportLeavesAContainerAnotherIsMaking() throws {
        let notes = "iCloud.com.example.notes"
        let base = NSTemporaryDirectory() + "ckfs-second-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        try Self.exportThousands(of: notes, to: base + "/export")
        let target = try CLIFixture()

        let container = target.store + "/" + notes
        let first = try Spawned(CLIFixture.binary, ["import", base + "/export", "--store", target.store])
        while first.isRunning && !FileManager.default.fileExists(atPath: container + "/development") { usleep(200) }
        first.signal(SIGSTOP)
        defer { first.signal(SIGCONT) }
        try #require(FileManager.default.fileExists(atPath: container + "/copy-unfinished"), "the import ended before it was stopped; fill more records")

        let second = CLIFixture.exec(CLIFixture.binary, ["import", base + "/export", "--store", target.store])
        #expect(second.status == 1 && second.stderr.contains("is being imported into") && second.stderr.contains("by another import now"), "\(second.stderr)")
        #expect(FileManager.default.fileExists(atPath: container + "/copy-unfinished"), "the first import's container is left to it")
        let fsck = target.run(["fsck"], user: nil)
        #expect(fsck.status == 0 && (fsck.stdout + fsck.stderr).contains("is being imported now"), "\(fsck.stdout) \(fsck.stderr)")

        first.signal(SIGCONT)
        #expect(first.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: container + "/copy-unfinished"))
        #expect(try Store.open(at: target.store).container(notes).database(.private, caller: Caller(userName: "alice")).recordCount() == 3000)
        #expect(target.run(["fsck"], user: nil).status == 0)
    }

    /// Exports the store at `store`, imports the export into a new store, exports that, and
    /// checks that the two exports are the same bytes (`diff -r`) and the moved store is clean.
    static func expectRoundTrip(_ store: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let base = NSTemporaryDirectory() + "ckfs-round-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: base) }
        let first = CLIFixture.exec(CLIFixture.binary, ["export", base + "/first", "--store", store])
        try #require(first.status == 0, "\(first.stderr)", sourceLocation: sourceLocation)
        let imported = CLIFixture.exec(CLIFixture.binary, ["import", base + "/first", "--store", base + "/moved"])
        try #require(imported.status == 0, "\(imported.stderr)", sourceLocation: sourceLocation)
        let second = CLIFixture.exec(CLIFixture.binary, ["export", base + "/second", "--store", base + "/moved"])
        try #require(second.status == 0, "\(second.stderr)", sourceLocation: sourceLocation)
        let diff = shell("diff -r '\(base)/first' '\(base)/second'")
        #expect(diff.status == 0, "the two exports differ: \(diff.stdout.prefix(2000))", sourceLocation: sourceLocation)
        let fsck = CLIFixture.exec(CLIFixture.binary, ["fsck", "--store", base + "/moved"])
        #expect(fsck.status == 0, "\(fsck.stdout) \(fsck.stderr)", sourceLocation: sourceLocation)
        #expect(first.stdout == second.stdout.replacingOccurrences(of: base + "/second", with: base + "/first"), sourceLocation: sourceLocation)
    }

    /// A store a Web Services client written by others filled (zones, a sync loop, uploaded
    /// assets, a share, subscriptions and their notifications) goes out and back unchanged.
    @Test func aStoreMadeOverHTTPGoesOutAndBackUnchanged() throws {
        let fixture = try ServeFixture()
        for (script, test) in [("test_sync.py", "test_sync_loop"), ("test_assets_users.py", "test_assets"),
                               ("test_sharing.py", "test_shared_database"), ("test_notifications.py", "test_subscriptions")] {
            let out = fixture.python(script, [test])
            try #require(out.status == 0 && out.stdout.contains("\(test): passed"), "\(script) \(test): \(out.stdout)\(out.stderr)")
        }
        fixture.server.signal(SIGTERM)
        _ = fixture.server.wait()
        try Self.expectRoundTrip(fixture.cli.store)
    }

    /// A store changed through the mount by shell tools (a new file, `sed -i`, `cp`, `rm`, a
    /// key-value plist) goes out and back unchanged.
    @Test func aStoreMadeThroughTheMountGoesOutAndBackUnchanged() throws {
        let m = try MountFixture()
        let zone = m.publicZone
        let edits = m.sh("""
            set -e
            cd '\(zone)'
            printf '{"fields": {"title": "from the shell"}}' > Note/shell.json
            sed -i 's/Welcome/Welcome back/' Note/welcome.json
            cp Note/shell.json Note/copied.json
            rm Note/copied.json
            """)
        try #require(edits.status == 0, "\(edits.stderr)")
        #expect(m.read(zone + "/Note/welcome.json")?.contains("Welcome back") == true, "the edit was saved")
        #expect(CLIFixture.exec(CLIFixture.binary, ["unmount", m.mount]).status == 0)
        try Self.expectRoundTrip(m.store)
    }

    @Test func anExportOverSomethingAndAnImportOverAHeldContainerAreRefused() throws {
        let cli = try CLIFixture()
        try #require(cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"a","fields":{}}"#).status == 0)
        let folder = NSTemporaryDirectory() + "ckfs-export-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(CLIFixture.exec(CLIFixture.binary, ["export", folder, "--store", cli.store]).status == 0)
        let over = CLIFixture.exec(CLIFixture.binary, ["export", folder, "--store", cli.store])
        #expect(over.status == 1 && over.stderr.contains("is not empty"), "\(over.stderr)")
        let held = CLIFixture.exec(CLIFixture.binary, ["import", folder, "--store", cli.store])
        #expect(held.status == 1 && held.stderr.contains("holds container") && held.stderr.contains("--skip-held"), "\(held.stderr)")
        let skipped = CLIFixture.exec(CLIFixture.binary, ["import", folder, "--store", cli.store, "--skip-held"])
        #expect(skipped.status == 0 && skipped.stdout.contains("imported 0 containers") && skipped.stdout.contains("left as they were: iCloud.local.ckfs"),
                "\(skipped.stdout) \(skipped.stderr)")
        let none = CLIFixture.exec(CLIFixture.binary, ["import", folder + "-missing", "--store", cli.store])
        #expect(none.status == 1 && none.stderr.contains("no store at"), "\(none.stderr)")
        #expect(cli.run(["record", "fetch", "a"]).status == 0)
    }
}
