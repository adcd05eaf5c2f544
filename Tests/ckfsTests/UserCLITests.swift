import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs user`, `ckfs permission` and `--no-account`: account status, ownership and write roles, permissions, discovery.
@Suite struct UserCLITests {
    static func value(_ key: String, in out: CLIFixture.Output) -> String? {
        out.stdout.split(separator: "\n").first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
    }

    @Test func whoamiAddUpdateListAndAutoEnrol() throws {
        let cli = try CLIFixture()
        let me = cli.run(["user", "whoami"], user: nil)
        #expect(me.status == 0, "\(me.stderr)")
        #expect(Self.value("account", in: me) == "available")
        #expect(Self.value("name", in: me) == Caller.currentOSUserName)
        #expect(Self.value("uid", in: me) == String(geteuid()))
        let id = try #require(Self.value("userRecordID", in: me))
        #expect(id.hasPrefix("_"))
        #expect(Self.value("userRecordID", in: cli.run(["user", "whoami"], user: nil)) == id, "stable")

        let added = cli.run(["user", "add", "bob", "--uid", "4321", "--email", "Bob@Example.com", "--contact", "alice@example.com"], user: nil)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(Self.value("emails", in: added) == "bob@example.com")
        let again = cli.run(["user", "add", "bob"], user: nil)
        #expect(again.status == 1 && again.stderr.contains("already exists"))
        let sameUID = cli.run(["user", "add", "robert", "--uid", "4321"], user: nil)
        #expect(sameUID.status == 1 && sameUID.stderr.contains("uid 4321"))
        let badEmail = cli.run(["user", "add", "eve", "--email", "eve"], user: nil)
        #expect(badEmail.status == 1 && badEmail.stderr.contains("not an email address"))
        #expect(cli.run(["user", "update", "bob", "--restricted", "--grant-write", "Note"], user: nil).status == 0)
        let list = cli.run(["user", "list"], user: nil)
        let bobLine = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("bob\t") })
        #expect(bobLine.contains("uid=4321") && bobLine.contains("restricted") && bobLine.contains("write=Note"))
        #expect(list.stdout.contains(Caller.currentOSUserName + "\t" + id))
        let missing = cli.run(["user", "update", "nobody", "--restricted"], user: nil)
        #expect(missing.status == 1 && missing.stderr.contains("unknownItem"))

        // Restricted: whoami says so; the private database refuses, saying why.
        #expect(Self.value("account", in: cli.run(["user", "whoami"], user: "bob")) == "restricted")
        let refused = cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"n","fields":{"t":"x"}}"#, user: "bob")
        #expect(refused.status == 1 && refused.stderr.contains("notAuthenticated") && refused.stderr.contains("restricted"))

        // Auto-enrolment off: an unknown name has no account, and is not added.
        #expect(cli.run(["user", "auto-enrol", "off"], user: nil).status == 0)
        #expect(Self.value("account", in: cli.run(["user", "whoami"], user: "stranger")) == "noAccount")
        let stranger = cli.run(["record", "query", "--type", "Note"], user: "stranger")
        #expect(stranger.status == 1 && stranger.stderr.contains("ckfs user add"), "\(stranger.stderr)")
        #expect(!cli.run(["user", "list"], user: nil).stdout.contains("stranger"))
        #expect(cli.run(["user", "list"], user: nil).stdout.contains("not enrolled"))
    }

    /// With no account the public database reads and nothing writes.
    @Test func noAccountReadsThePublicDatabaseOnly() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["record", "save", "--database", "public"], input: #"{"recordType":"Note","recordName":"hello","fields":{"t":"hi"}}"#).status == 0)
        let read = cli.run(["record", "fetch", "hello", "--database", "public", "--no-account"], user: nil)
        #expect(read.status == 0 && read.stdout.contains("\"hi\""), "\(read.stderr)")
        let write = cli.run(["record", "save", "--database", "public", "--no-account"], input: #"{"recordType":"Note","recordName":"x","fields":{"t":"x"}}"#, user: nil)
        #expect(write.status == 1 && write.stderr.contains("notAuthenticated") && write.stderr.contains("no account"))
        let priv = cli.run(["record", "query", "--type", "Note", "--no-account"], user: nil)
        #expect(priv.status == 1 && priv.stderr.contains("notAuthenticated"))
        let kv = cli.run(["kv", "list", "--no-account"], user: nil)
        #expect(kv.status == 1 && kv.stderr.contains("notAuthenticated"))
        #expect(Self.value("account", in: cli.run(["user", "whoami", "--no-account"], user: nil)) == "noAccount")
        let both = cli.run(["user", "whoami", "--no-account"], user: "alice")
        #expect(both.status == 64 && both.stderr.contains("--no-account"))
    }

    /// Ownership through the CLI: another user's public record is refused; a write role allows it.
    @Test func publicRecordsOfAnotherUserNeedAWriteRole() throws {
        let cli = try CLIFixture()
        let note = #"{"recordType":"Note","recordName":"p","fields":{"t":"alice's"}}"#
        #expect(cli.run(["record", "save", "--database", "public"], input: note).status == 0)
        let bobSave = cli.run(["record", "save", "--database", "public", "--policy", "all-keys"],
                              input: #"{"recordType":"Note","recordName":"p","fields":{"t":"bob's"}}"#, user: "bob")
        #expect(bobSave.status == 1 && bobSave.stderr.contains("permissionFailure") && bobSave.stderr.contains("write role"), "\(bobSave.stderr)")
        let bobDelete = cli.run(["record", "delete", "p", "--database", "public"], user: "bob")
        #expect(bobDelete.status == 1 && bobDelete.stderr.contains("permissionFailure"))
        #expect(cli.run(["record", "fetch", "p", "--database", "public"]).stdout.contains("alice's"))
        #expect(cli.run(["user", "update", "bob", "--grant-write", "Note"], user: nil).status == 0)
        let allowed = cli.run(["record", "save", "--database", "public", "--policy", "all-keys"],
                              input: #"{"recordType":"Note","recordName":"p","fields":{"t":"bob's"}}"#, user: "bob")
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(cli.run(["record", "fetch", "p", "--database", "public"]).stdout.contains("bob's"))
        #expect(cli.run(["record", "delete", "p", "--database", "public"], user: "bob").status == 0)
    }

    /// Asked once; discovery by contacts, email and user record ID.
    @Test func permissionAndDiscovery() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["user", "add", "alice", "--email", "alice@example.com", "--contact", "bob@example.com", "--contact", "carol@example.com"], user: nil).status == 0)
        #expect(cli.run(["user", "add", "bob", "--email", "bob@example.com"], user: nil).status == 0)
        #expect(cli.run(["user", "add", "carol", "--email", "carol@example.com"], user: nil).status == 0)
        #expect(cli.run(["permission", "status", "discoverability"], user: "bob").stdout == "initialState\n")
        let noTerminal = cli.run(["permission", "request", "discoverability"], user: "bob")
        #expect(noTerminal.status == 1 && noTerminal.stdout == "couldNotComplete\n" && noTerminal.stderr.contains("--grant"))
        #expect(cli.run(["permission", "request", "discoverability", "--grant"], user: "bob").stdout == "granted\n")
        #expect(cli.run(["permission", "request", "discoverability", "--deny"], user: "bob").stdout == "granted\n", "decided: not asked again")
        #expect(cli.run(["permission", "request", "discoverability", "--deny"], user: "carol").stdout == "denied\n")
        #expect(cli.run(["permission", "status", "discoverability"], user: "carol").stdout == "denied\n")
        let both = cli.run(["permission", "request", "discoverability", "--grant", "--deny"], user: "carol")
        #expect(both.status == 64)

        let all = cli.run(["user", "discover"], user: "alice")
        #expect(all.status == 0)
        let bobID = try #require(Self.value("userRecordID", in: cli.run(["user", "whoami"], user: "bob")))
        #expect(all.stdout == "bob\t\(bobID)\tbob@example.com\n")
        #expect(cli.run(["user", "discover", "--email", "bob@example.com"], user: "carol").stdout.hasPrefix("bob\t"))
        #expect(cli.run(["user", "discover", "--record-id", bobID], user: "carol").stdout.hasPrefix("bob\t"))
        let hidden = cli.run(["user", "discover", "--email", "carol@example.com"], user: "alice")
        #expect(hidden.status == 1 && hidden.stdout.isEmpty && hidden.stderr.contains("not granted"))
    }
}

extension UserCLITests {
    /// fsck reads container.json as the engine does and says what is wrong with it.
    @Test func fsckChecksContainerJSON() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["user", "add", "bob", "--uid", "5001", "--email", "bob@example.com"], user: nil).status == 0)
        #expect(cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"n","fields":{"t":"x"}}"#, user: "bob").status == 0)
        let clean = cli.run(["fsck"], user: nil)
        #expect(clean.status == 0 && clean.stdout.contains(", 1 users:"), "\(clean.stdout) \(clean.stderr)")
        let path = cli.store + "/iCloud.local.ckfs/container.json"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        // A second user with bob's uid and email, a role for nobody, and bob's entry gone.
        text = text.replacingOccurrences(of: #""name": "bob""#, with: #""name": "robert""#)
        text = text.replacingOccurrences(of: #""writeRoles": {}"#, with: #""writeRoles": {"Note": ["ghost"]}"#)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let python = CLIFixture.exec("/usr/bin/python3", ["-c", """
            import json, sys
            d = json.load(open(sys.argv[1]))
            u = [x for x in d["users"] if x["name"] == "robert"][0]
            d["users"].append(dict(u, name="rob", userRecordName="_0000"))
            json.dump(d, open(sys.argv[1], "w"))
            """, path])
        #expect(python.status == 0, "\(python.stderr)")
        let bad = cli.run(["fsck"], user: nil)
        #expect(bad.status != 0)
        #expect(bad.stdout.contains("uid 5001 belongs to several users") || bad.stderr.contains("uid 5001 belongs to several users"), "\(bad.stdout) \(bad.stderr)")
        #expect((bad.stdout + bad.stderr).contains("email bob@example.com belongs to several users"))
        #expect((bad.stdout + bad.stderr).contains("user ghost, who is not in users"))
        try Data("{\"users\": [{\"name\": \"x\"}]}".utf8).write(to: URL(fileURLWithPath: path))
        let broken = cli.run(["fsck"], user: nil)
        #expect(broken.status != 0 && (broken.stdout + broken.stderr).contains("users[0] (x) needs a \"userRecordName\""))
        try Data("{\"users\": []}".utf8).write(to: URL(fileURLWithPath: path))
        let orphan = cli.run(["fsck"], user: nil)
        #expect(orphan.status != 0 && (orphan.stdout + orphan.stderr).contains("belongs to no identity"), "bob's private folder has no identity now")
    }
}
