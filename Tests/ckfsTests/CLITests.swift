import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The CLI's contract: output, exit codes and error lines.
@Suite struct CLITests {
    @Test func initTwiceIsHarmless() throws {
        let cli = try CLIFixture()
        cli.run(["record", "save"], input: #"{"recordType":"A","recordName":"keep","fields":{"x":1}}"#)
        let again = cli.run(["init"])
        #expect(again.status == 0)
        #expect(cli.run(["record", "fetch", "keep"]).status == 0)
    }

    /// The device a save records is `--device`, else `CKFS_DEVICE_ID`, else this host and process.
    @Test func theDeviceOfASaveComesFromTheOptionOrTheEnvironment() throws {
        let cli = try CLIFixture()
        let environment = ProcessInfo.processInfo.environment.merging(["CKFS_DEVICE_ID": "laptop-7"]) { $1 }
        func deviceOfSave(_ name: String, _ args: [String]) throws -> String? {
            let saved = CLIFixture.exec(CLIFixture.binary, ["record", "save", "--store", cli.store, "--user", "alice"] + args,
                                        input: #"{"recordType":"Note","recordName":"\#(name)","fields":{}}"#, environment: environment)
            try #require(saved.status == 0, "\(saved.stderr)")
            return saved.json?["created"]?["deviceID"]?.stringValue
        }
        #expect(try deviceOfSave("from-env", []) == "laptop-7")
        #expect(try deviceOfSave("from-option", ["--device", "desk-2"]) == "desk-2")
        // Without either (the test's own environment has no CKFS_DEVICE_ID): host-pid.
        let plain = cli.run(["record", "save"], input: #"{"recordType":"Note","recordName":"plain","fields":{}}"#)
        let device = try #require(plain.json?["created"]?["deviceID"]?.stringValue, "\(plain.stdout)")
        #expect(device != "laptop-7" && device.split(separator: "-").last.flatMap { Int($0) } != nil, "\(device)")
    }

    @Test func saveFetchAndDeleteARecord() throws {
        let cli = try CLIFixture()
        let saved = cli.run(["record", "save"], input: #"{"recordType":"Artist","recordName":"mei","fields":{"name":"Mei Chen","age":41,"tags":["ink","paper"]}}"#)
        #expect(saved.status == 0, "\(saved.stderr)")
        let json = try #require(saved.json)
        #expect(json["recordChangeTag"]?.stringValue == "1")
        #expect(json["fields"]?["age"] == .object(["type": .string("INT64"), "value": .int(41)]))
        #expect(saved.stdout.hasPrefix("{\n  \"created\": {"), "canonical: keys sorted, 2-space indent")

        let fetched = cli.run(["record", "fetch", "mei", "--keys", "name"])
        #expect(fetched.json?["fields"]?.objectValue?.keys.sorted() == ["name"])

        let two = cli.run(["record", "fetch", "mei", "nobody"])
        #expect(two.status == 1)
        #expect(two.json?.arrayValue?.count == 1)
        #expect(two.stderr.contains("unknownItem: record nobody"))

        #expect(cli.run(["record", "delete", "mei"]).stdout == "deleted mei\n")
        let gone = cli.run(["record", "delete", "mei"])
        #expect(gone.status == 1)
        #expect(gone.stderr.hasPrefix("ckfs: unknownItem: record mei does not exist"))
    }

    /// A field given as {"value": …} without its type takes the schema's, as through the mount
    /// and `records/modify`: base64 text for a BYTES field is bytes, not a string.
    @Test func aFieldWithoutItsTypeTakesTheSchemasType() throws {
        let cli = try CLIFixture()
        let typed = cli.run(["record", "save"], input: #"{"recordType":"Clip","recordName":"typed","fields":{"data":{"type":"BYTES","value":"AQ=="}}}"#)
        try #require(typed.status == 0, "\(typed.stderr)")
        let saved = cli.run(["record", "save"], input: #"{"recordType":"Clip","recordName":"untyped","fields":{"data":{"value":"aGVsbG8="}}}"#)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.json?["fields"]?["data"] == .object(["type": .string("BYTES"), "value": .string("aGVsbG8=")]), "\(saved.stdout)")
    }

    @Test func savingAnArrayOrRecordsAndDeletesInOneOperation() throws {
        let cli = try CLIFixture()
        let arr = cli.run(["record", "save"], input: #"[{"recordType":"N","recordName":"a"},{"recordType":"N","recordName":"b"}]"#)
        #expect(arr.json?.arrayValue?.count == 2)
        let mixed = cli.run(["record", "save"], input: #"{"records":[{"recordType":"N","recordName":"c"}],"deletes":["a"]}"#)
        #expect(mixed.status == 0, "\(mixed.stderr)")
        #expect(try cli.database().fetch([RecordID(recordName: "a")])[0].1.error?.code == .unknownItem)
    }

    @Test func aStaleSaveIsAConflictNamingTheCode() throws {
        let cli = try CLIFixture()
        cli.run(["record", "save"], input: #"{"recordType":"N","recordName":"a","fields":{"v":1}}"#)
        let v1 = #"{"recordType":"N","recordName":"a","recordChangeTag":"1","fields":{"v":2}}"#
        #expect(cli.run(["record", "save"], input: v1).status == 0)
        let stale = cli.run(["record", "save"], input: v1)
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("serverRecordChanged"))
        #expect(stale.stderr.contains("record a"))
        let forced = cli.run(["record", "save", "--policy", "all-keys"], input: v1)
        #expect(forced.status == 0)
    }

    @Test func partialFailureListsOneLinePerFailedItem() throws {
        let cli = try CLIFixture()
        let input = #"[{"recordType":"N","recordName":"ok"},{"recordType":"N","recordName":"_bad"},{"recordType":"N","recordName":"ok2"}]"#
        let atomic = cli.run(["record", "save"], input: input)
        #expect(atomic.status == 1)
        let lines = atomic.stderr.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0].contains("partialFailure"))
        #expect(lines.filter { $0.contains("batchRequestFailed") }.count == 2)
        #expect(lines.contains { $0.contains("invalidArguments: record _bad") })
        let loose = cli.run(["record", "save", "--non-atomic"], input: input)
        #expect(loose.status == 1)
        #expect(loose.json?.arrayValue?.count == 2)
    }

    @Test func badInputIsAClearError() throws {
        let cli = try CLIFixture()
        let bad = cli.run(["record", "save"], input: "{\"recordType\": \"N\",\n \"fields\": {\"a\": 1,}}")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("invalidArguments: standard input is not valid JSON at line 2"))
        let usage = cli.run(["record", "save", "--policy", "sometimes"])
        #expect(usage.status == 64)
        let noStore = CLIFixture.exec(CLIFixture.binary, ["record", "fetch", "x", "--store", "/nonexistent/ckfs"])
        #expect(noStore.status == 1)
        #expect(noStore.stderr.contains("ckfs init"))
        let badContainer = cli.run(["record", "fetch", "x", "--container", "com.example"])
        #expect(badContainer.stderr.contains("badContainer"))
    }

    @Test func zonesAndChanges() throws {
        let cli = try CLIFixture()
        #expect(cli.run(["zone", "create", "Work"]).status == 0)
        #expect(cli.run(["zone", "list"]).stdout == "Work\n_defaultZone\n")
        // A zone's encryption scope is set when it is made and never changes.
        #expect(cli.run(["zone", "create", "Vault", "--per-zone-encryption"]).stdout == "zone Vault ready (per-zone encryption)\n")
        let again = cli.run(["zone", "create", "Vault"])
        #expect(again.status == 1 && again.stderr.contains("perZone encryption"), "\(again.stderr)")
        #expect(cli.run(["zone", "delete", "Vault"]).status == 0)
        cli.run(["record", "save", "--zone", "Work", "--client-token", "batch-7"], input: #"{"recordType":"N","recordName":"a"}"#)
        let all = try #require(cli.run(["changes", "--zone", "Work"]).json)
        #expect(all["records"]?.arrayValue?.count == 1)
        #expect(all["moreComing"] == .bool(false))
        #expect(all["clientChangeToken"]?.stringValue == "batch-7")
        let token = try #require(all["token"]?.stringValue)
        cli.run(["record", "delete", "a", "--zone", "Work"])
        let since = try #require(cli.run(["changes", "--zone", "Work", "--since", token]).json)
        #expect(since["deleted"] == .array([.string("a")]))
        #expect(since["records"] == .array([]))
        #expect(cli.run(["changes", "--since", "garbage"]).stderr.contains("invalidArguments"))
        #expect(cli.run(["zone", "delete", "Work"]).status == 0)
        #expect(cli.run(["changes", "--zone", "Work"]).stderr.contains("zoneNotFound"))
    }

    @Test func schemaShowAndDeploy() throws {
        let cli = try CLIFixture()
        cli.run(["record", "save"], input: #"{"recordType":"Artist","recordName":"a","fields":{"name":"x"}}"#)
        let show = try #require(cli.run(["schema", "show"]).json)
        #expect(show["development"]?["Artist"]?["name"] == .string("STRING"))
        #expect(show["production"] == .object([:]))
        let prod = cli.run(["record", "save", "--environment", "production"], input: #"{"recordType":"Artist","recordName":"a","fields":{"name":"x"}}"#)
        #expect(prod.status == 1)
        #expect(prod.stderr.contains("ckfs schema deploy"))
        #expect(cli.run(["schema", "deploy"]).stdout.contains("1 new record types, 1 new fields"))
        #expect(cli.run(["record", "save", "--environment", "production"], input: #"{"recordType":"Artist","recordName":"a","fields":{"name":"x"}}"#).status == 0)
        // Indexes: every index a string can have, until one is removed.
        let indexes = try #require(cli.run(["schema", "show"]).json)["indexes"]
        #expect(indexes?["development"]?["Artist"]?["name"] == .array([.string("QUERYABLE"), .string("SEARCHABLE"), .string("SORTABLE")]))
        let removed = cli.run(["schema", "index", "remove", "Artist", "name", "queryable"])
        #expect(removed.status == 0 && removed.stdout.contains("Artist.name is no longer queryable in development"), "\(removed.stderr)")
        let refused = cli.run(["record", "query", "--type", "Artist", "--predicate", "name == 'x'"])
        #expect(refused.status == 1 && refused.stderr.contains("not marked queryable") && refused.stderr.contains("ckfs schema index add Artist name queryable"), "\(refused.stderr)")
        #expect(cli.run(["record", "query", "--type", "Artist", "--predicate", "name == 'x'", "--environment", "production"]).status == 0, "production keeps its indexes until a deploy")
        #expect(cli.run(["schema", "index", "add", "Artist", "name", "queryable"]).status == 0)
        #expect(cli.run(["record", "query", "--type", "Artist", "--predicate", "name == 'x'"]).status == 0)
        let bad = cli.run(["schema", "index", "add", "Artist", "name", "fast"])
        #expect(bad.status == 64 && bad.stderr.contains("say queryable, sortable or searchable"), "\(bad.stderr)")
    }

    @Test func quotaExceededThenDeleteSucceeds() throws {
        let cli = try CLIFixture(initArgs: ["--private-quota", "2000"])
        let big = #"{"recordType":"N","recordName":"big","fields":{"s":"\#(String(repeating: "x", count: 1500))"}}"#
        #expect(cli.run(["record", "save"], input: big).status == 0)
        let over = cli.run(["record", "save"], input: big.replacingOccurrences(of: "\"big\"", with: "\"big2\""))
        #expect(over.status == 1)
        #expect(over.stderr.contains("quotaExceeded"))
        #expect(cli.run(["record", "delete", "big"]).status == 0)
    }

    @Test func fsckIsCleanOnAGoodStoreAndFailsOnDamage() throws {
        let cli = try CLIFixture()
        cli.run(["record", "save"], input: #"{"recordType":"N","recordName":"a"}"#)
        let ok = cli.run(["fsck"])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("checked 1 zones, 1 records, 0 key-value keys"))
        let db = try cli.database()
        try Data("junk".utf8).write(to: URL(fileURLWithPath: StoreLayout.recordsDirectory((db.zoneStorage("_defaultZone") as! ZoneFolder).directory) + "/junk.json"))
        let bad = cli.run(["fsck"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("damage"))
        #expect(bad.stderr.contains("junk"))
    }
}
