import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A CloudKit app (Examples/NotesSync, `import CloudKit` alone) run as its own process, launch
/// after launch: `CKContainer.default()` opens the store CKFS_STORE names, as the OS user, and
/// the zone's change token, archived between launches, brings only what changed since.
@Suite struct CloudKitAppTests {
    static let app = URL(fileURLWithPath: CLIFixture.binary).deletingLastPathComponent().appendingPathComponent("NotesSync").path

    static func launch(_ cli: CLIFixture, _ args: [String]) -> CLIFixture.Output {
        var environment = ProcessInfo.processInfo.environment
        environment["CKFS_STORE"] = cli.store
        return CLIFixture.exec(app, args, environment: environment)
    }

    static func lines(_ out: CLIFixture.Output) -> [String] { out.stdout.split(separator: "\n").map(String.init) }

    @Test func anAppSyncsAcrossLaunchesWithAnArchivedToken() throws {
        let cli = try CLIFixture()
        let token = cli.store + "-token"
        defer { unlink(token) }

        for (name, text) in [("n1", "milk"), ("n2", "bread \"fresh\"")] {
            let saved = Self.launch(cli, ["save", name, text])
            #expect(saved.status == 0 && Self.lines(saved) == ["saved \(name)"], "\(saved.stderr)")
        }
        let first = Self.launch(cli, ["sync", token])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(Set(Self.lines(first)) == ["changed n1 milk", "changed n2 bread \"fresh\""])
        #expect(FileManager.default.fileExists(atPath: token), "the token was not archived")
        #expect(Self.lines(Self.launch(cli, ["sync", token])).isEmpty, "nothing changed since the archived token")

        // Later launches change the zone; the next sync brings only those changes.
        #expect(Self.launch(cli, ["delete", "n1"]).status == 0)
        #expect(Self.launch(cli, ["save", "n3", "eggs"]).status == 0)
        // The key-value store the app made with NSUbiquitousKeyValueStore() is the OS user's.
        #expect(Self.lines(Self.launch(cli, ["last"])) == ["n3"])
        let kv = cli.run(["kv", "get", "lastSaved"], user: nil)
        #expect(kv.status == 0 && kv.stdout.contains("n3"), "\(kv.stdout) \(kv.stderr)")
        let second = Self.launch(cli, ["sync", token])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(Set(Self.lines(second)) == ["deleted n1", "changed n3 eggs"])

        // The app acted as the OS user: its notes are in the OS user's private database.
        let fetched = cli.run(["record", "fetch", "--zone", "Notes", "n2", "n3"], user: nil)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let names = fetched.json?.arrayValue?.compactMap { $0["recordName"]?.stringValue }
        #expect(names == ["n2", "n3"], "\(fetched.stdout.prefix(500))")
        #expect(cli.run(["record", "fetch", "--zone", "Notes", "n2"], user: "alice").status != 0, "another user's database has no such note")

        // A damaged token file is refused with the archiver's error, and the app says so.
        try Data("not an archive".utf8).write(to: URL(fileURLWithPath: token))
        let damaged = Self.launch(cli, ["sync", token])
        #expect(damaged.status == 1 && damaged.stderr.hasPrefix("error: "), "\(damaged.stderr)")
        // With no store at CKFS_STORE, CloudKit's error, not a crash.
        let noStore = CLIFixture.exec(Self.app, ["save", "n4", "x"], environment: ["CKFS_STORE": cli.store + "-missing"])
        #expect(noStore.status == 1 && noStore.stderr.hasPrefix("error: "), "\(noStore.stderr)")
    }
}
