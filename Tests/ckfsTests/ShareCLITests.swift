import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs share` and `--database shared` between three users of one store: alice owns a list,
/// bob may change it, carol may read it; each sees what the share grants before and after
/// accepting, after removal, and after the share is deleted.
@Suite struct ShareCLITests {
    @Test func threeUsersThroughTheCLI() throws {
        let cli = try CLIFixture()
        for (name, user) in [("bob", "bob"), ("carol", "carol")] {
            #expect(cli.run(["user", "add", name, "--email", "\(name)@example.com"], user: user).status == 0)
        }
        #expect(cli.run(["zone", "create", "Lists"]).status == 0)
        let list = cli.run(["record", "save", "--zone", "Lists"], input: #"{"recordType":"List","recordName":"groceries","fields":{"title":"Groceries"}}"#)
        #expect(list.status == 0, "\(list.stderr)")
        // A record file may name its parent.
        let milk = cli.run(["record", "save", "--zone", "Lists"],
                           input: #"{"recordType":"Item","recordName":"milk","parent":{"recordName":"groceries"},"fields":{"text":"milk"}}"#)
        #expect(milk.status == 0, "\(milk.stderr)")
        #expect(cli.run(["record", "save", "--zone", "Lists"], input: #"{"recordType":"Note","recordName":"diary","fields":{"text":"mine"}}"#).status == 0)

        // Bad input says what to do.
        let both = cli.run(["share", "create", "groceries", "--zone", "Lists", "--whole-zone"])
        #expect(both.status == 64 && both.stderr.contains("--whole-zone"))
        let made = cli.run(["share", "create", "groceries", "--zone", "Lists", "--title", "Groceries"])
        #expect(made.status == 0, "\(made.stderr)")
        let url = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.hasPrefix("ckfs://") && url.contains("/share/"))
        #expect(cli.run(["share", "add-participant", url, "bob@example.com", "--permission", "read-write"]).status == 0)
        #expect(cli.run(["share", "add-participant", url, "carol"]).status == 0)
        let notOwner = cli.run(["share", "add-participant", url, "carol"], user: "bob")
        #expect(notOwner.status != 0 && notOwner.stderr.contains("only its owner"))
        let unknown = cli.run(["share", "add-participant", url, "dave"])
        #expect(unknown.status != 0 && unknown.stderr.contains("ckfs user list"))

        func fetch(_ name: String, as user: String) -> CLIFixture.Output {
            cli.run(["record", "fetch", "--database", "shared", "--owner", "alice", "--zone", "Lists", name], user: user)
        }
        // Before acceptance nothing is shared.
        #expect(fetch("milk", as: "bob").stderr.contains("zoneNotFound"))
        #expect(cli.run(["share", "accept", url], user: "bob").status == 0)
        #expect(cli.run(["share", "accept", url], user: "carol").status == 0)
        let listed = cli.run(["share", "list"], user: "carol")
        #expect(listed.stdout.contains("owner=alice") && listed.stdout.contains("you=READ_ONLY,ACCEPTED"), "\(listed.stdout)")

        // Both read the hierarchy, not the diary.
        for user in ["bob", "carol"] {
            #expect(fetch("milk", as: user).json?["fields"]?["text"]?["value"] == .string("milk"))
            #expect(fetch("milk", as: user).json?["parent"]?["recordName"] == .string("groceries"))
            #expect(fetch("diary", as: user).stderr.contains("unknownItem"))
        }
        // Bob adds an item; carol may not.
        let shared = ["--database", "shared", "--owner", "alice", "--zone", "Lists"]
        let eggs = #"{"recordType":"Item","recordName":"eggs","parent":{"recordName":"groceries"},"fields":{"text":"eggs"}}"#
        let bobSave = cli.run(["record", "save"] + shared, input: eggs, user: "bob")
        #expect(bobSave.status == 0, "\(bobSave.stderr)")
        let carolSave = cli.run(["record", "save"] + shared, input: eggs.replacingOccurrences(of: "eggs", with: "cake"), user: "carol")
        #expect(carolSave.status != 0 && carolSave.stderr.contains("permissionFailure"), "\(carolSave.stderr)")
        // Alice's own database has bob's item, made by bob; her usage counts it.
        let aliceEggs = cli.run(["record", "fetch", "--zone", "Lists", "eggs"])
        #expect(aliceEggs.json?["created"]?["userRecordName"] == .string(try cli.database(user: "bob").userRecordName))

        // Removing carol ends her access at once; bob keeps his.
        #expect(cli.run(["share", "remove-participant", url, "carol"]).status == 0)
        #expect(fetch("milk", as: "carol").stderr.contains("zoneNotFound"))
        #expect(fetch("milk", as: "bob").status == 0)
        // Deleting the share ends bob's too, and the root no longer names a share.
        let shareName = try #require(try cli.database().shareRecords(in: "Lists").first?.recordID.recordName)
        #expect(cli.run(["record", "delete", "--zone", "Lists", shareName]).status == 0)
        #expect(fetch("milk", as: "bob").stderr.contains("zoneNotFound"))
        #expect(cli.run(["record", "fetch", "--zone", "Lists", "groceries"]).json?["share"] == nil)
    }

    /// Asking for access through the CLI: bob and carol ask, alice sees them in `share list`
    /// and in the share's file (read by `python3`), adds bob, blocks carol, and unblocks her.
    @Test func accessRequestsThroughTheCLI() throws {
        let cli = try CLIFixture()
        for name in ["bob", "carol"] { #expect(cli.run(["user", "add", name, "--email", "\(name)@example.com"], user: name).status == 0) }
        #expect(cli.run(["zone", "create", "Lists"]).status == 0)
        #expect(cli.run(["record", "save", "--zone", "Lists"], input: #"{"recordType":"List","recordName":"groceries","fields":{}}"#).status == 0)
        let url = cli.run(["share", "create", "groceries", "--zone", "Lists"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = cli.run(["share", "request-access", url], user: "bob")
        #expect(refused.status == 1 && refused.stderr.contains("takes access requests"), "\(refused.stderr)")
        #expect(cli.run(["share", "access-requests", url]).status == 0)
        for name in ["bob", "carol"] { #expect(cli.run(["share", "request-access", url], user: name).status == 0) }
        let listed = cli.run(["share", "list"]).stdout
        #expect(listed.contains("access-requests=allowed") && listed.contains("requesters=bob,carol"), "\(listed)")
        #expect(!cli.run(["share", "list"], user: "bob").stdout.contains("requesters="), "only the owner sees who asks")

        let shareName = try #require(try cli.database().shareRecords(in: "Lists").first?.recordID.recordName)
        let file = cli.store + "/" + (try #require(FileManager.default.enumerator(atPath: cli.store)?.compactMap { $0 as? String }.first { $0.hasSuffix("/\(shareName).json") }))
        let asked = try runPython("import json; s = json.load(open('\(file)')); print(s['allowsAccessRequests'], sorted(r['userIdentity']['lookupInfo']['emailAddress'] for r in s['requesters']))")
        #expect(String(decoding: asked, as: UTF8.self) == "True ['bob@example.com', 'carol@example.com']\n")

        #expect(cli.run(["share", "add-participant", url, "bob"]).status == 0)
        #expect(cli.run(["share", "deny", url, "carol", "--block"]).status == 0)
        let blocked = cli.run(["share", "request-access", url], user: "carol")
        #expect(blocked.status == 1 && blocked.stderr.contains("blocked"), "\(blocked.stderr)")
        let after = try runPython("import json; s = json.load(open('\(file)')); print(len(s.get('requesters', [])), [p.get('isApprovedRequester', False) for p in s['participants']], [b['userIdentity']['userRecordName'] == s['participants'][0]['userIdentity']['userRecordName'] for b in s['blockedIdentities']])")
        #expect(String(decoding: after, as: UTF8.self) == "0 [False, True] [False]\n")
        #expect(cli.run(["share", "deny", url, "bob"]).stderr.contains("has not asked"))
        #expect(cli.run(["share", "unblock", url, "carol"]).status == 0)
        #expect(cli.run(["share", "request-access", url], user: "carol").status == 0)
        #expect(cli.run(["share", "list"]).stdout.contains("requesters=carol"))
    }
}
