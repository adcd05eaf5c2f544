import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Writers through the mount, over HTTP and by the CLI at once, on the same records: every save
/// the mount refuses reaches its writer, and every read through the mount is one whole version.
@Suite(.serialized) struct ConcurrentWritersTests {
    /// A private record `Thing/a.json` of the OS user, mounted; the CLI that made it.
    private func thingMount() throws -> (MountFixture, String) {
        let m = try MountFixture(demo: false)
        let folder = m.mount + "/\(MountFixture.container)/private/_defaultZone/Thing"
        let r = m.sh("mkdir '\(folder)' && echo '{\"fields\":{\"v\":\"first\"}}' > '\(folder)/a.json'")
        #expect(r.status == 0, "\(r.stderr)")
        return (m, folder + "/a.json")
    }

    /// A writer's descriptor copied into a child (`fork`, as `subprocess` and shells do) and
    /// closed there, before the writer closes its own: the child's close is not the writer's,
    /// so the save and its refusal wait for the writer's close. A stale text written in place
    /// (with `ftruncate` or without) fails at the writer's `close` with ESTALE and is kept in
    /// lost+found; a current one is saved by it.
    @Test func aForkedCopyOfTheDescriptorLeavesTheSaveToTheWriter() throws {
        let (m, file) = try thingMount()
        let script = """
        import errno, glob, json, os, subprocess, sys
        f, ckfs, store, user, lost = sys.argv[1:6]
        def edit(value, stale, truncate):
            fd = os.open(f, os.O_RDWR)
            text = b''
            while True:
                piece = os.read(fd, 65536)
                if not piece: break
                text += piece
            rec = json.loads(text)
            if stale:
                subprocess.run([ckfs, 'record', 'save', '--store', store, '--user', user, '--policy', 'all-keys'], check=True,
                               input=json.dumps({'recordType': 'Thing', 'recordName': 'a', 'fields': {'v': 'cli-' + value}}), text=True,
                               capture_output=True)
            rec['fields']['v'] = {'type': 'STRING', 'value': value}
            out = json.dumps(rec).encode()
            if truncate:
                os.pwrite(fd, out, 0)
                os.ftruncate(fd, len(out))
            else:
                os.pwrite(fd, out + b' ' * max(0, len(text) - len(out)), 0)
            child = os.fork()
            if child == 0:
                os._exit(0)
            os.waitpid(child, 0)
            try:
                os.close(fd)
                return 'saved'
            except OSError as e:
                return errno.errorcode[e.errno]
        def stored():
            r = subprocess.run([ckfs, 'record', 'fetch', 'a', '--store', store, '--user', user], check=True, capture_output=True, text=True)
            return json.loads(r.stdout)['fields']['v']['value']
        def kept(value):
            return any(value in open(p).read() for p in glob.glob(lost + '/*.json'))
        out = []
        for n, (stale, truncate) in enumerate([(True, True), (True, False), (False, True), (False, False)]):
            value = 'mount-%d' % n
            got = edit(value, stale, truncate)
            now = stored()
            out.append('%s:%s:%s' % (got, 'mine' if now == value else 'other', 'kept' if kept(value) else 'none'))
        print(' '.join(out))
        """
        let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script, file, CLIFixture.binary, m.store, MountFixture.user,
                                                 m.store + "/lost+found"])
        #expect(r.status == 0, "\(r.stderr.suffix(1500))")
        let results = r.stdout.split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(results == ["ESTALE:other:kept", "ESTALE:other:kept", "saved:mine:none", "saved:mine:none"],
                "close's outcome, whose value is stored, whether lost+found kept the text: \(results)\n\(m.mountLog.suffix(2000))")
    }

    /// One writer saves three records in place through the mount, from what it read (so some
    /// saves are stale and refused), one over HTTP and one with the CLI, for a bounded time,
    /// while another thread reads the files through the mount. Every save the mount writer's
    /// `close` acknowledged is in the zone's history, every refusal reached it (as many as the
    /// daemon logged), and no read is cut off or mixed. `scripts/soak-writers` runs it longer.
    @Test func writersThroughTheMountHTTPAndTheCLILoseNothingAndReadersSeeWholeVersions() throws {
        let f = try ServeFixture(mounted: true)
        let mount = try #require(f.mountPoint)
        let user = MountFixture.user
        let token = f.cli.run(["token", "sign-in"], user: user).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for name in ["a", "b", "c"] {
            let r = f.cli.run(["record", "save"], input: "{\"recordType\":\"Thing\",\"recordName\":\"\(name)\",\"fields\":{\"v\":\"first\"}}", user: user)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let r = CLIFixture.exec("/usr/bin/env", ["python3", ConcurrentWritersTests.soakScript, "--seconds", "12", "--ckfs", CLIFixture.binary,
                                                 "--store", f.cli.store, "--user", user, "--mount", mount, "--url", f.url,
                                                 "--api-token", f.apiToken, "--web-token", token])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr.suffix(1500))")
        let counts = try #require(r.json?.objectValue, "\(r.stdout)")
        func n(_ key: String) -> Int { counts[key]?.int64Value.map(Int.init) ?? -1 }
        // Enough of each for the counts to mean something, also on a machine busy with other tests.
        #expect(n("mountSaved") > 20 && n("httpSaved") > 20 && n("cliSaved") > 2 && n("reads") > 200, "\(r.stdout)")
        #expect(n("checked") == n("mountSaved"), "a run this short keeps the whole log: every acknowledged save is checked: \(r.stdout)")
        #expect(n("missing") == 0, "saves the mount acknowledged that are not in the zone's history: \(r.stdout)")
        #expect(n("refusalsLogged") == n("mountRefused"), "refusals in mount.log against those the writer heard: \(r.stdout)")
        #expect(n("torn") == 0, "reads that were no whole version: \(r.stdout)")
    }

    /// `scripts/soak-writers`, which the suite runs for a few seconds.
    static let soakScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/soak-writers").path
}
