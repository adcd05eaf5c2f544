import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs serve` as a process: a thousand malformed requests, slow and huge bodies, concurrent
/// clients (`Tests/http/test_server.py`); a clean stop on SIGTERM; and no acknowledged save
/// lost to kill -9.
@Suite struct WebServicesServerTests {
    func run(_ test: String, serveArgs: [String] = []) throws {
        let fixture = try ServeFixture(serveArgs: serveArgs)
        let out = fixture.python("test_server.py", [test], extra: ["CKFS_SERVER_PID": String(fixture.server.pid)])
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)\nserver log:\n\(fixture.serverLog.suffix(3000))")
        #expect(out.stdout.contains("\(test): passed"))
        #expect(fixture.server.isRunning, "the server died")
    }

    @Test func malformedRequests() throws { try run("test_malformed_requests", serveArgs: ["--max-body", "65536", "--body-timeout", "3"]) }
    @Test func slowAndEndlessBodies() throws { try run("test_slow_and_endless_bodies", serveArgs: ["--body-timeout", "2"]) }
    @Test func concurrentClients() throws { try run("test_concurrent_clients") }

    /// The server reads a zone from its index file, as the CLI and the mount do, never the
    /// whole zone into memory: its first query makes the index where there is none.
    @Test func answersQueriesFromTheZonesIndexFile() throws {
        let fixture = try ServeFixture()
        let saved = fixture.cli.run(["record", "save"],
                                    input: #"[{"recordName":"a","recordType":"Note","fields":{"n":{"value":1}}},{"recordName":"b","recordType":"Note","fields":{"n":{"value":2}}}]"#, user: "alice")
        try #require(saved.status == 0, "\(saved.stderr)")
        let zones = try FileManager.default.subpathsOfDirectory(atPath: fixture.cli.store).filter { $0.contains("/private/") && $0.hasSuffix("/zones/_defaultZone") }
        let zone = fixture.cli.store + "/" + (try #require(zones.first, "no private default zone in \(fixture.cli.store)"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: zone + "/index.sqlite" + suffix) }
        let script = """
            from cloudkit_client import ok, post
            r = ok(post("private", "records/query", {"query": {"recordType": "Note", "sortBy": [{"fieldName": "n", "ascending": False}]}}))
            print(",".join(x["recordName"] for x in r["records"]))
            """
        let out = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script],
                                  environment: fixture.environment.merging(["PYTHONPATH": ServeFixture.pythonDirectory]) { _, new in new })
        #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b,a", "\(out.stdout)\(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: zone + "/index.sqlite"), "the server answered without the zone's index file")
    }

    /// `ckfs serve` runs ckfs-server in its place; its errors read as ckfs's, and a `ckfs` whose
    /// server is in neither place it looks says where it looked and how to fix it.
    @Test func serveBecomesTheServerProgramOrSaysWhereItLooked() throws {
        let cli = try CLIFixture()
        let noStore = CLIFixture.exec(CLIFixture.binary, ["serve", "--port", "0", "--store", cli.store + "-none"])
        #expect(noStore.status == 1)
        #expect(noStore.stderr.hasPrefix("ckfs: ") && noStore.stderr.contains("ckfs init"), "\(noStore.stderr)")
        // Checked by ckfs itself, before the server runs.
        let badPort = CLIFixture.exec(CLIFixture.binary, ["serve", "--port", "70000", "--store", cli.store])
        #expect(badPort.status == 64 && badPort.stderr.contains("--port must be between 0 and 65535"), "\(badPort.stderr)")

        let alone = NSTemporaryDirectory() + "ckfs-alone-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: alone) }
        // A hard link: the program's path (/proc/self/exe) is then the lone folder's.
        if link(CLIFixture.binary, alone + "/ckfs") != 0 { try FileManager.default.copyItem(atPath: CLIFixture.binary, toPath: alone + "/ckfs") }
        let missing = CLIFixture.exec(alone + "/ckfs", ["serve", "--port", "0", "--store", cli.store])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains(alone + "/ckfs-server") && missing.stderr.contains("/../libexec/ckfs/ckfs-server")
                && missing.stderr.contains("scripts/install"), "\(missing.stderr)")
    }

    /// SIGTERM lets a request in flight (a long poll) finish, then the server exits 0.
    @Test func stopsCleanlyOnSIGTERM() throws {
        let fixture = try ServeFixture(serveArgs: ["--long-poll-seconds", "2"])
        let script = """
            import threading, time, requests
            from cloudkit_client import ok, post
            url = ok(post(None, "tokens/create", {"apnsEnvironment": "development"}, web=None))["webcourierURL"]
            ok(post(None, "tokens/register", {"apnsEnvironment": "development", "apnsToken": url.rsplit("/", 1)[1]}))
            print("polling", flush=True)
            r = requests.get(url, timeout=30)
            print("poll ended", r.status_code, flush=True)
            """
        let python = try Spawned("/usr/bin/env", ["python3", "-c", script], environment: fixture.environment,
                                 directory: ServeFixture.pythonDirectory, stderr: .output)
        _ = python.output { $0.contains("polling") }
        usleep(300_000)
        fixture.server.signal(SIGTERM)
        let serverStatus = fixture.server.wait()
        python.wait()
        let text = python.outputToEnd
        #expect(text.contains("poll ended 204"), "\(text)\n\(fixture.serverLog.suffix(2000))")
        #expect(serverStatus == 0, "\(fixture.serverLog.suffix(2000))")
        #expect(Self.stagingFolders(of: fixture.server.pid).isEmpty, "a stopped server leaves its uploads' folder behind")
    }

    /// Four clients save over HTTP; the server is killed with SIGKILL mid-stream; every save
    /// it acknowledged is in the store, with its value, after fsck.
    @Test func killNineLosesNoAcknowledgedSave() throws {
        // A temporary directory of this test's own: a server another test starts meanwhile
        // sweeps the shared one, and would remove the killed server's folder before the check.
        let temporary = NSTemporaryDirectory() + "ckfs-serve-kill-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let fixture = try ServeFixture(temporaryDirectory: temporary)
        let python = try Spawned("/usr/bin/env", ["python3", "-c", "import test_server; test_server.writers()"],
                                 environment: fixture.environment, directory: ServeFixture.pythonDirectory, stderr: .inherit)
        usleep(1_500_000)
        fixture.server.signal(SIGKILL)
        fixture.server.wait()
        python.wait()
        let acknowledged = python.outputToEnd
            .split(separator: "\n").map { $0.split(separator: " ") }
        #expect(acknowledged.count > 20, "too few saves before the kill to prove anything: \(acknowledged.count)")
        let fsck = fixture.cli.run(["fsck"], user: nil)
        #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
        let db = try Store.open(at: fixture.cli.store).container().database(.private, caller: Caller(userName: "alice"))
        var missing: [String] = []
        for parts in acknowledged {
            let name = String(parts[0])
            guard let record = try? db.record(for: RecordID(recordName: name)),
                  case .int64(let v)? = record["v"], String(v) == parts[1] else { missing.append(name); continue }
        }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
        // The killed server could not remove its uploads' folder; the next server does.
        let killed = fixture.server.pid
        #expect(!Self.stagingFolders(of: killed, in: temporary).isEmpty)
        let (next, _) = try ServeFixture.start(store: fixture.cli.store, temporaryDirectory: temporary)
        #expect(Self.stagingFolders(of: killed, in: temporary).isEmpty, "a new server leaves a killed one's uploads' folder")
        next.signal(SIGTERM)
        #expect(next.wait() == 0)
    }

    /// The staging folders (`ckfs-serve-<pid>-…`) of the server with process ID `pid`, in
    /// `directory` (the temporary directory when nil).
    static func stagingFolders(of pid: pid_t, in directory: String? = nil) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory ?? NSTemporaryDirectory())) ?? []).filter { $0.hasPrefix("ckfs-serve-\(pid)-") }
    }
}
