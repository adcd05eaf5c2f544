import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Private data stays private outside the mount too: the store's files are 0600 and its
/// folders 0700 whatever the umask, so another OS user cannot read them; the CLI acts as
/// another ckfs user only for root or the store's owner; `lost+found/` shows each caller only
/// their own rejected text and keeps a bounded number per user. The two-user tests need root
/// (to add users); CI runs as root, so there they always run.
@Suite(.serialized) struct PrivacyTests {
    static let canRun = MultiUserMountTests.canRun
    static let base = "/var/tmp/ckfs-privacy-tests"

    /// Every file and folder under `root` (root included) whose mode is not 0600 (files) or
    /// 0700 (folders), as "mode path", found by Python's `os.lstat`.
    static func loosePaths(under root: String) throws -> [String] {
        let out = try runPython("""
        import os, stat, json
        root = "\(root)"
        bad = []
        def check(p):
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode): return
            want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
            if stat.S_IMODE(st.st_mode) != want: bad.append(f"{oct(stat.S_IMODE(st.st_mode))} {p}")
        check(root)
        n = 0
        for d, dirs, files in os.walk(root):
            for name in dirs + files:
                check(os.path.join(d, name)); n += 1
        print(json.dumps({"bad": bad, "count": n}))
        """)
        let json = try #require(try? JSONParser.parse(out))
        #expect((json["count"]?.int64Value ?? 0) > 5, "the walk saw the store")
        return json["bad"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Runs `ckfs ARGS` under umask 000, so only the modes ckfs asks for count.
    static func ckfs(_ args: [String], input: String? = nil) -> CLIFixture.Output {
        let quoted = args.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return CLIFixture.exec("/bin/sh", ["-c", "umask 000 && exec '\(CLIFixture.binary)' \(quoted)"], input: input)
    }

    static func runAs(_ user: String, _ args: [String]) -> CLIFixture.Output {
        CLIFixture.exec("/usr/sbin/runuser", ["-u", user, "--"] + args, environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/"])
    }

    @Test func everyFileTheCLIAndTheMountMakeIsPrivate() throws {
        let root = Self.base + "/" + UUID().uuidString
        let store = root + "/store", mount = root + "/M"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer {
            _ = CLIFixture.exec(CLIFixture.binary, ["unmount", mount])
            try? FileManager.default.removeItem(atPath: root)
        }
        let me = Caller.currentOSUserName
        for (args, input) in [(["init"], nil), (["user", "add", "ckfsa-someone"], nil), (["kv", "set", "token", "secret", "--user", me], nil),
                              (["record", "save", "--user", me], #"{"recordType":"Note","recordName":"p","fields":{"text":"private"}}"#),
                              (["record", "save", "--database", "public", "--user", me], #"{"recordType":"Note","recordName":"q","fields":{"text":"public"}}"#),
                              (["fsck"], nil)] as [([String], String?)] {
            let r = Self.ckfs(args + ["--store", store], input: input)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let fromCLI = try Self.loosePaths(under: store)
        #expect(fromCLI.isEmpty, "made by the CLI under umask 000: \(fromCLI)")

        // The mount: records, a zone, a key-value entry, rejected text in lost+found, its log.
        let started = Self.ckfs(["mount", mount, "--store", store])
        try #require(started.status == 0, "\(started.stderr)")
        let c = MountFixture.container
        let script = """
        cd '\(mount)/\(c)' && mkdir -p private/_defaultZone/Note private/Diary/Entry public/_defaultZone/Note \
        && echo '{"fields":{"text":"a"}}' > private/_defaultZone/Note/a.json \
        && echo '{"fields":{"text":"d"}}' > private/Diary/Entry/d.json \
        && echo '{"fields":{"text":"b"}}' > public/_defaultZone/Note/b.json \
        && printf '<string>v</string>' > keyvalue/k.plist \
        && echo '{not json' > private/_defaultZone/Note/bad.json; ls '\(mount)/lost+found'
        """
        let wrote = CLIFixture.exec("/bin/sh", ["-c", script])
        #expect(wrote.stdout.contains("bad-"), "the rejected text is in lost+found: \(wrote.stdout) \(wrote.stderr)")
        #expect(CLIFixture.exec(CLIFixture.binary, ["unmount", mount]).status == 0)
        let fromMount = try Self.loosePaths(under: store)
        #expect(fromMount.isEmpty, "made by the mount under umask 000: \(fromMount)")
        #expect(FileManager.default.fileExists(atPath: store + "/lost+found") && FileManager.default.fileExists(atPath: store + "/mount.log"))

        // fsck names what others can read (a store from before, or a chmod) and says how to fix it.
        let settings = try Store.open(at: store).layout.settingsFile
        #expect(chmod(settings, 0o644) == 0)
        let loose = Self.ckfs(["fsck", "--store", store])
        #expect(loose.status == 0, "a readable file is not damage: \(loose.stderr)")
        #expect(loose.stderr.contains(settings) && loose.stderr.contains("chmod -R go-rwx"), "\(loose.stderr)")
    }

    @Test(.enabled(if: canRun, "needs root to create OS users (CI runs as root)"))
    func anotherOSUserCannotReadTheStoreOrActAsSomeoneElse() throws {
        let users = MultiUserMountTests.OSUsers()
        let alice = try users.add("ckfsa"), bob = try users.add("ckfsb")
        let root = Self.base + "/" + UUID().uuidString
        let store = root + "/store"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(chmod(Self.base, 0o755) == 0 && chmod(root, 0o755) == 0)
        for args in [["init"], ["user", "add", alice.name, "--uid", String(alice.uid)], ["user", "add", bob.name, "--uid", String(bob.uid)],
                     ["kv", "set", "token", "alice-token-1234", "--user", alice.name]] {
            let r = CLIFixture.exec(CLIFixture.binary, args + ["--store", store])
            try #require(r.status == 0, "\(args): \(r.stderr)")
        }
        let saved = CLIFixture.exec(CLIFixture.binary, ["record", "save", "--store", store, "--user", alice.name],
                                    input: #"{"recordType":"Note","recordName":"diary","fields":{"text":"alice secret text"}}"#)
        try #require(saved.status == 0, "\(saved.stderr)")

        // Bob cannot read Alice's key-value plist or any file holding her private record.
        let kvPath = try keyValueFilePath(Store.open(at: store).container(), user: alice.name)
        var secretFiles = [kvPath]
        let walker = FileManager.default.enumerator(atPath: store)
        while let p = walker?.nextObject() as? String {
            if let d = FileManager.default.contents(atPath: store + "/" + p), String(decoding: d, as: UTF8.self).contains("alice secret text") {
                secretFiles.append(store + "/" + p)
            }
        }
        #expect(secretFiles.count >= 2, "\(secretFiles)")
        for path in secretFiles {
            let r = Self.runAs(bob.name, ["/bin/cat", path])
            #expect(r.status != 0 && r.stderr.contains("Permission denied") && !r.stdout.contains("alice"), "bob read \(path): \(r.stdout)")
        }

        // With the files readable (an older store, or an admin's chmod), the CLI still refuses
        // to act as Alice for Bob: the check is the CLI's, not only the file modes'.
        #expect(CLIFixture.exec("/bin/chmod", ["-R", "a+rwX", store]).status == 0)
        let asAlice = Self.runAs(bob.name, [CLIFixture.binary, "kv", "get", "token", "--store", store, "--user", alice.name])
        #expect(asAlice.status != 0 && !asAlice.stdout.contains("alice-token"), "bob read alice's value: \(asAlice.stdout)")
        #expect(asAlice.stderr.contains("--user \(alice.name): only root or the store's owner (uid 0) may act as another user; run as \(alice.name)"),
                "\(asAlice.stderr)")
        let recordAsAlice = Self.runAs(bob.name, [CLIFixture.binary, "record", "fetch", "diary", "--store", store, "--user", alice.name])
        #expect(recordAsAlice.status != 0 && !recordAsAlice.stdout.contains("alice secret"), "\(recordAsAlice.stdout)")
        // Bob under his own name is himself.
        let own = Self.runAs(bob.name, [CLIFixture.binary, "kv", "list", "--store", store, "--user", bob.name])
        #expect(own.status == 0, "\(own.stderr)")
        // Root may act as anyone.
        let byRoot = CLIFixture.exec(CLIFixture.binary, ["kv", "get", "token", "--store", store, "--user", alice.name])
        #expect(byRoot.status == 0 && byRoot.stdout == "alice-token-1234\n", "\(byRoot.stderr)")
        // So may the store's owner.
        #expect(CLIFixture.exec("/bin/chown", ["-R", alice.name, store]).status == 0)
        let byOwner = Self.runAs(alice.name, [CLIFixture.binary, "kv", "list", "--store", store, "--user", bob.name])
        #expect(byOwner.status == 0, "\(byOwner.stderr)")
        let stillNot = Self.runAs(bob.name, [CLIFixture.binary, "kv", "get", "token", "--store", store, "--user", alice.name])
        #expect(stillNot.status != 0 && stillNot.stderr.contains("store's owner (uid \(alice.uid))"), "\(stillNot.stderr)")
    }

    @Test(.enabled(if: canRun, "needs root to create OS users (CI runs as root)"))
    func lostAndFoundShowsEachUserOnlyTheirOwnAndIsBounded() throws {
        let users = MultiUserMountTests.OSUsers()
        let alice = try users.add("ckfsa"), bob = try users.add("ckfsb")
        let c = MountFixture.container
        let m = try MountFixture(demo: false, base: Self.base, mountArgs: ["--allow-other"]) { store in
            for args in [["user", "add", alice.name, "--uid", String(alice.uid)], ["user", "add", bob.name, "--uid", String(bob.uid)]] {
                let r = CLIFixture.exec(CLIFixture.binary, args + ["--store", store])
                guard r.status == 0 else { throw CKError(.internalError, "\(args): \(r.stderr)") }
            }
        }
        #expect(chmod(m.root, 0o755) == 0 && chmod(Self.base, 0o755) == 0)
        let folder = "M/\(c)/private/_defaultZone/Note"
        let rejected = MultiUserMountTests.sh(m, as: alice.name, "mkdir -p \(folder) && echo '{not json' > \(folder)/salary-review.json; ls M/lost+found")
        #expect(rejected.stdout.contains("salary-review-"), "alice sees her rejected text: \(rejected.stdout) \(rejected.stderr)")
        let name = try #require(rejected.stdout.split(separator: "\n").first { $0.hasPrefix("salary-review-") && $0.hasSuffix(".json") })
        #expect(MultiUserMountTests.sh(m, as: alice.name, "cat M/lost+found/\(name)").stdout.contains("not json"))

        let bobSees = MultiUserMountTests.sh(m, as: bob.name, "ls -a M/lost+found; cat M/lost+found/\(name)")
        #expect(!bobSees.stdout.contains("salary"), "bob lists alice's record name: \(bobSees.stdout)")
        #expect(bobSees.status != 0, "bob reads alice's rejected text: \(bobSees.stdout)")
        // The daemon's owner (root here) sees everyone's.
        #expect(m.sh("ls M/lost+found").stdout.contains("salary-review-"))

        // Bob's rejected saves: at most 100 kept, his oldest go, Alice's stay.
        let many = MultiUserMountTests.sh(m, as: bob.name, "mkdir -p \(folder) && for i in $(seq 1 110); do echo \"{bad $i\" > \(folder)/b$i.json; done; ls M/lost+found")
        let bobs = many.stdout.split(separator: "\n").filter { $0.hasPrefix("b") && $0.hasSuffix(".json") }
        #expect(bobs.count == 100, "bob keeps \(bobs.count) rejected texts")
        #expect(bobs.contains { $0.hasPrefix("b110-") } && !bobs.contains { $0.hasPrefix("b1-") } && !bobs.contains { $0.hasPrefix("b10-") },
                "the oldest go: \(bobs.sorted().prefix(5))")
        #expect(many.stdout.split(separator: "\n").filter { $0.hasPrefix("b") && $0.hasSuffix(".txt") }.count == 100)
        #expect(MultiUserMountTests.sh(m, as: alice.name, "ls M/lost+found").stdout.contains("salary-review-"), "alice's entry stays")
        #expect(m.mountLog.contains("lost+found"), "drops are logged")
        #expect(m.mountLog.contains("b1.json") || m.mountLog.contains("b1-"), "the log names what went: \(m.mountLog.suffix(600))")
    }
}
