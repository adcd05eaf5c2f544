import Foundation
import Testing
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
}
