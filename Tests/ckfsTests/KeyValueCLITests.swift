import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The key-value store from the command line and between processes: `ckfs kv`, its
/// limits at and one past each boundary, notifications between two client processes, and
/// synchronized writes surviving SIGKILL.
@Suite struct KeyValueCLITests {
    func kvFile(_ cli: CLIFixture, user: String = "alice") throws -> String {
        try keyValueFilePath(Store.open(at: cli.store).container(), user: user)
    }

    func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Runs a `ckfs kv` command that must be refused with `code`, and checks the file is as it was.
    func expectRefused(_ cli: CLIFixture, _ args: [String], input: String? = nil, code: String) throws {
        let before = fileBytes(try kvFile(cli))
        let r = cli.run(args, input: input)
        #expect(r.status == 1, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("ckfs: \(code):"), "\(args): \(r.stderr)")
        #expect(fileBytes(try kvFile(cli)) == before, "\(args) changed the store")
    }

    @Test func setGetRemoveListWithTypes() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["kv", "set", "name", "Mei Chen"]).status == 0)
        #expect(cli.run(["kv", "set", "page", "42", "--type", "int"]).status == 0)
        #expect(cli.run(["kv", "set", "ratio", "0.25", "--type", "double"]).status == 0)
        #expect(cli.run(["kv", "set", "dark", "true", "--type", "bool"]).status == 0)
        #expect(cli.run(["kv", "set", "when", "2026-11-22T10:00:00Z", "--type", "date"]).status == 0)
        #expect(cli.run(["kv", "set", "blob", "AAEC", "--type", "data"]).status == 0)
        #expect(cli.run(["kv", "set", "cfg", #"{"tags": ["a", 1, 2.5], "nested": {"ok": false}}"#, "--type", "json"]).status == 0)
        #expect(cli.run(["kv", "get", "name"]).stdout == "Mei Chen\n")
        #expect(cli.run(["kv", "get", "page"]).stdout == "42\n")
        #expect(cli.run(["kv", "get", "when"]).stdout == "2026-11-22T10:00:00Z\n")
        #expect(cli.run(["kv", "get", "blob"]).stdout == "AAEC\n")
        #expect(cli.run(["kv", "get", "page", "--plist"]).stdout.contains("<integer>42</integer>"))
        let list = cli.run(["kv", "list", "--json"]).json
        #expect(list?["cfg"]?["type"]?.stringValue == "dictionary")
        #expect(list?["cfg"]?["value"]?["tags"] == .array([.string("a"), .int(1), .double(2.5)]))
        #expect(list?["dark"]?["value"] == .bool(true))
        #expect(cli.run(["kv", "list"]).stdout.split(separator: "\n").count == 7)
        // The API sees the types the CLI wrote.
        let kv = try KeyValueStore(store: Store.open(at: cli.store), user: "alice", synchronizeEvery: nil)
        #expect(kv.value(forKey: "ratio") == .real(0.25))
        #expect(kv.value(forKey: "blob") == .data([0, 1, 2]))
        #expect(kv.value(forKey: "when") == .date(Date(timeIntervalSince1970: 1_795_341_600)))
        #expect(cli.run(["kv", "remove", "name"]).status == 0)
        let missing = cli.run(["kv", "get", "name"])
        #expect(missing.status == 1 && missing.stderr.contains("unknownItem"))
        // Bad input names the type and the fix; nothing is written.
        let bad = cli.run(["kv", "set", "page", "forty", "--type", "int"])
        #expect(bad.status != 0 && bad.stderr.contains("not a 64-bit integer"))
        let badJSON = cli.run(["kv", "set", "cfg", "{\"a\": null}", "--type", "json"])
        #expect(badJSON.status != 0 && badJSON.stderr.contains("null"))
        #expect(cli.run(["kv", "get", "page"]).stdout == "42\n")
    }

    @Test func keyLengthAtAndPastTheLimit() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["kv", "set", String(repeating: "k", count: 64), "v"]).status == 0)
        #expect(cli.run(["kv", "set", String(repeating: "é", count: 32), "v"]).status == 0)
        try expectRefused(cli, ["kv", "set", String(repeating: "k", count: 65), "v"], code: "limitExceeded")
        try expectRefused(cli, ["kv", "set", String(repeating: "é", count: 32) + "e", "v"], code: "limitExceeded")
    }

    @Test func keyCountAtAndPastTheLimit() throws {
        let cli = try CLIFixture()
        let kv = try KeyValueStore(store: Store.open(at: cli.store), user: "alice", synchronizeEvery: nil)
        for i in 0..<1023 { try kv.setValue(.integer(Int64(i)), forKey: "k\(i)") }
        try kv.sync()
        #expect(cli.run(["kv", "set", "k1023", "last"]).status == 0)
        try expectRefused(cli, ["kv", "set", "k1024", "one too many"], code: "quotaExceeded")
        #expect(cli.run(["kv", "list"]).stdout.split(separator: "\n").count == 1024)
    }

    @Test func valueAndStoreSizeAtAndPastTheLimit() throws {
        let cli = try CLIFixture()
        let overhead = "<string></string>".utf8.count
        let atLimit = String(repeating: "v", count: 1_048_576 - overhead)
        let set = cli.run(["kv", "set", "big", "-"], input: atLimit)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("1048576 bytes"))
        try expectRefused(cli, ["kv", "set", "big", "-"], input: atLimit + "v", code: "limitExceeded")
        // The store is full: any other value is past the total.
        try expectRefused(cli, ["kv", "set", "more", "x"], code: "quotaExceeded")
        // Two halves fill it exactly; one byte more does not fit.
        #expect(cli.run(["kv", "remove", "big"]).status == 0)
        let half = 1_048_576 / 2 - overhead
        #expect(cli.run(["kv", "set", "a", "-"], input: String(repeating: "a", count: half)).status == 0)
        #expect(cli.run(["kv", "set", "b", "-"], input: String(repeating: "b", count: half)).status == 0)
        try expectRefused(cli, ["kv", "set", "b", "-"], input: String(repeating: "b", count: half + 1), code: "quotaExceeded")
    }

    @Test func fsckChecksKeyValueStores() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["kv", "set", "a", "1"]).status == 0)
        #expect(cli.run(["kv", "set", "b", "2"]).status == 0)
        let path = try kvFile(cli)
        let dir = (path as NSString).deletingLastPathComponent
        // A killed writer's temp file is swept; the store is clean.
        try Data("half".utf8).write(to: URL(fileURLWithPath: dir + "/.ckfs-tmp-keyvalue.plist-abc"))
        let swept = cli.run(["fsck"])
        #expect(swept.status == 0, "\(swept.stderr)")
        #expect(swept.stdout.contains("2 key-value keys"))
        #expect(swept.stdout.contains("repaired:") && swept.stdout.contains("temporary key-value file"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/.ckfs-tmp-keyvalue.plist-abc"))
        // A hand-broken file is damage, named with its position; writes refuse to replace it.
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data("<plist><dict><key>a</key>\n<string>1</dict></plist>".utf8).write(to: URL(fileURLWithPath: path))
        let damaged = cli.run(["fsck"])
        #expect(damaged.status == 1)
        #expect(damaged.stderr.contains("keyvalue.plist is not a valid property list") && damaged.stderr.contains("line 2"), "\(damaged.stderr)")
        let refused = cli.run(["kv", "set", "c", "3"])
        #expect(refused.status == 1 && refused.stderr.contains("badDatabase"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) != good, "the broken file is left for a person to fix")
        try good.write(to: URL(fileURLWithPath: path))
        #expect(cli.run(["fsck"]).status == 0)
    }

    // MARK: Two processes

    @Test func aChangeReachesTheOtherProcessAndNotTheWriter() throws {
        let cli = try CLIFixture()
        let a = try ClientProcess(cli), b = try ClientProcess(cli)
        defer { a.stop(); b.stop() }
        a.send("set color blue")
        a.send("set size 3")
        a.send("sync")
        try #require(a.waitFor({ $0["event"]?.stringValue == "ok" && $0["command"]?.stringValue == "sync" }) != nil)
        // B hears it on its own (its timer), with exactly the keys.
        let heard = b.waitFor { $0["event"]?.stringValue == "change" }
        #expect(heard?["reason"]?.stringValue == "serverChange")
        #expect(heard?["keys"] == .array([.string("color"), .string("size")]))
        b.send("get color")
        #expect(b.waitFor({ $0["event"]?.stringValue == "value" })?["value"] == .string("blue"))

        // A change from the CLI reaches both; neither hears its own writes.
        #expect(cli.run(["kv", "set", "color", "green"]).status == 0)
        #expect(a.waitFor({ $0["event"]?.stringValue == "change" })?["keys"] == .array([.string("color")]))
        #expect(b.waitFor({ $0["event"]?.stringValue == "change" && $0["keys"] == .array([.string("color")]) }) != nil)

        // A quota violation is told only to the client that tried it.
        a.send("set \(String(repeating: "k", count: 65)) x")
        #expect(a.waitFor({ $0["event"]?.stringValue == "error" })?["code"]?.stringValue == "limitExceeded")
        // The event comes from another thread: it may be printed before or after the error line.
        let violation = a.waitFor(anywhere: true) { $0["event"]?.stringValue == "change" && $0["reason"]?.stringValue == "quotaViolationChange" }
        #expect(violation?["keys"] == .array([.string(String(repeating: "k", count: 65))]))
        Thread.sleep(forTimeInterval: 1)
        let aChanges = a.lines.filter { $0["event"]?.stringValue == "change" }
        let bChanges = b.lines.filter { $0["event"]?.stringValue == "change" }
        #expect(aChanges.count == 2, "A heard \(aChanges)")  // the CLI's change and its own violation
        #expect(bChanges.count == 2, "B heard \(bChanges)")  // A's first sync and the CLI's change
    }

    // MARK: Durability

    @Test func synchronizedWritesSurviveSIGKILL() throws {
        let cli = try CLIFixture()
        let path = try kvFile(cli)
        var rng = SystemRandomNumberGenerator()
        var lastAcknowledged: Int64 = 0
        for round in 0..<15 {
            // Two kills in three land within 50 ms after the first synchronized write, so the
            // writer gets somewhere however slowly this machine starts a process.
            let lines = round % 3 == 0
                ? try cli.runKilled(["debug", "kv-writer"], after: UInt32.random(in: 80_000...250_000, using: &rng))
                : try cli.runKilledAfterFirstLine(["debug", "kv-writer"], then: UInt32.random(in: 0...50_000, using: &rng))
            lastAcknowledged = lines.compactMap { $0.hasPrefix("synced ") ? Int64($0.dropFirst(7)) : nil }.max() ?? lastAcknowledged
            // An outside reader (Python's plistlib) finds a whole file holding every acknowledged write.
            let check = try runPython("""
            import os, plistlib
            if not os.path.exists("\(path)"):
                assert \(lastAcknowledged) == 0, "the store is gone"
                print(0)
                raise SystemExit
            v = plistlib.load(open("\(path)", "rb"))
            c = v.get("counter", 0)
            assert c >= \(lastAcknowledged), f"counter {c} < acknowledged \(lastAcknowledged)"
            assert c <= \(lastAcknowledged) + 1, f"counter {c} is past the next write"
            for j in range(100):
                k = v.get(f"k{j}")
                if k is not None:
                    assert k % 100 == j and k <= c, f"k{j} = {k}"
                    assert c - k < 100, f"k{j} = {k} is stale, counter {c}"
            print(c)
            """)
            let onDisk = Int64(String(decoding: check, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            #expect(onDisk >= lastAcknowledged, "round \(round)")
            lastAcknowledged = max(lastAcknowledged, onDisk)
        }
        #expect(lastAcknowledged > 20, "the writer made progress between kills")
        // The next write sweeps away temp files the killed writers left.
        #expect(cli.run(["kv", "set", "after", "kills"]).status == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent).filter { $0.hasPrefix(".ckfs-tmp-") }
        #expect(left.isEmpty, "\(left)")
    }
}

/// A `ckfs debug kv-client` process: commands go to its standard input, its JSON lines are
/// collected as they come.
final class ClientProcess: @unchecked Sendable {
    let process: Spawned
    /// Guards `consumed`.
    private let lock = NSLock()
    private var consumed = 0

    /// A `ckfs debug kv-client` of `user`, ready for commands.
    convenience init(_ cli: CLIFixture, user: String = "alice") throws {
        try self.init(arguments: ["debug", "kv-client", "--store", cli.store, "--user", user, "--every", "0.2"])
        guard waitFor({ $0["event"]?.stringValue == "ready" }) != nil else { throw CKError(.internalError, "kv-client did not start") }
    }

    /// `ckfs ARGUMENTS`, its JSON lines collected.
    init(arguments: [String]) throws {
        process = try Spawned(CLIFixture.binary, arguments, input: true)
    }

    /// The whole lines printed so far, as JSON (lines that are not JSON are left out).
    var lines: [JSONValue] {
        let text = process.output
        guard let end = text.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        return text[..<end].split(separator: UInt8(ascii: "\n")).compactMap { try? JSONParser.parse(Array($0)) }
    }

    func send(_ line: String) { process.write(line + "\n") }

    /// The first line not yet taken that matches, waiting up to `seconds`; lines before it are
    /// passed over. With `anywhere`, lines already passed over count too and none is taken.
    func waitFor(anywhere: Bool = false, _ match: (JSONValue) -> Bool, seconds: Double = 30) -> JSONValue? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let collected = lines
            let found = lock.withLock { () -> JSONValue? in
                for i in (anywhere ? 0 : consumed)..<collected.count where match(collected[i]) {
                    if !anywhere { consumed = i + 1 }
                    return collected[i]
                }
                return nil
            }
            if let found { return found }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    func stop() {
        send("quit")
        process.closeInput()
        if process.wait(seconds: 3) == nil { process.signal(SIGTERM) }
    }
}

/// Runs a Python 3 script and returns its standard output; fails with its errors otherwise.
func runPython(_ script: String) throws -> [UInt8] {
    let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script])
    guard r.status == 0 else { throw CKError(.internalError, "python3 failed: \(r.stderr)") }
    return Array(r.stdout.utf8)
}
