import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The kernel keeps a type folder's listing (FOPEN_CACHE_DIR) while the zone does
/// not change, so `ls` and `tar` of a large folder list it once; every change, made through
/// the mount or elsewhere, shows at the next `ls`.
@Suite(.serialized) struct DirectoryCacheTests {
    static let noteDir = "M/\(MountFixture.container)/public/_defaultZone/Note"

    /// Saves `count` notes through the library, as another process would.
    static func saveNotes(_ m: MountFixture, _ names: [String]) throws {
        let db = try m.database(.public)
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let records = names.map { Record(recordType: "Note", recordID: RecordID(recordName: $0, zoneID: zone), fields: ["title": .string($0)]) }
        let result = try db.modify(saving: records)
        for (_, r) in result.saveResults { _ = try r.get() }
    }

    /// The names `ls` shows in the Note folder, sorted.
    static func listed(_ m: MountFixture) -> [String] {
        m.sh("ls -f \(noteDir)").stdout.split(separator: "\n").map(String.init).filter { $0 != "." && $0 != ".." }.sorted()
    }

    /// Waits until the daemon has written nothing for half a second: the invalidations for
    /// saves made elsewhere go out a moment after the watcher sees them, and each one resets
    /// the kernel's copy of the folder (as it must).
    static func waitUntilQuiet(_ m: MountFixture) throws {
        var last = try m.daemonWriteCalls()
        let deadline = Date().addingTimeInterval(10)
        repeat {
            Thread.sleep(forTimeInterval: 0.5)
            let now = try m.daemonWriteCalls()
            if now == last { return }
            last = now
        } while Date() < deadline
    }

    @Test(arguments: [[], ["--read-only"]])
    func aFolderListedAgainAsksTheDaemonOnlyToOpenIt(mountArgs: [String]) throws {
        let m = try MountFixture(mountArgs: mountArgs)
        for part in 0..<2 { try Self.saveNotes(m, (0..<300).map { "note-\(part)-\($0)" }) }
        #expect(Self.listed(m).count >= 600)
        try Self.waitUntilQuiet(m)
        #expect(Self.listed(m).count >= 600)
        // 600 entries take several READDIR replies; a kept listing takes none, only the
        // OPENDIR and RELEASEDIR answers (2 a listing). The best of three rounds, so that a
        // moment's reset of the kernel's copy (an invalidation landing late, a page this VM's
        // host reclaims) cannot fail it; with the cache off every round took 140 or more.
        var rounds: [Int] = []
        for _ in 0..<3 {
            rounds.append(try m.daemonWriteCalls(during: "for i in $(seq 20); do ls -f \(Self.noteDir) > /dev/null; done"))
            if rounds.last! <= 45 { break }
        }
        #expect(rounds.min()! <= 45, "\(rounds) replies for rounds of 20 listings of a folder that did not change")
    }

    @Test(arguments: [[], ["--read-only"]])
    func changesMadeElsewhereShowAtTheNextListing(mountArgs: [String]) throws {
        let m = try MountFixture(mountArgs: mountArgs)
        let first = Self.listed(m)
        #expect(first.contains("welcome.json"))
        for round in 0..<5 {
            try Self.saveNotes(m, ["outside-\(round)"])
            #expect(Self.listed(m).contains("outside-\(round).json"), "round \(round)")
            let db = try m.database(.public)
            try db.delete(RecordID(recordName: "outside-\(round)", zoneID: db.zoneID(ZoneID.defaultZoneName)))
            #expect(Self.listed(m) == first, "round \(round): a deleted record still listed")
        }
    }

    @Test func changesThroughTheMountShowAtTheNextListing() throws {
        let m = try MountFixture()
        let first = Self.listed(m)
        #expect(m.sh(#"echo '{"fields": {"title": "made"}}' > \#(Self.noteDir)/made.json"#).status == 0)
        #expect(Self.listed(m) == (first + ["made.json"]).sorted())
        #expect(m.sh("sed -i 's/made/edited/' \(Self.noteDir)/made.json").status == 0)
        #expect(Self.listed(m) == (first + ["made.json"]).sorted(), "sed -i leaves no temporary name behind")
        #expect(m.sh("rm \(Self.noteDir)/made.json").status == 0)
        #expect(Self.listed(m) == first)

        // A file listed while it is being written and then refused must not stay listed:
        // nothing but the daemon knows it went.
        let during = m.sh("exec 3> \(Self.noteDir)/refused.json; ls -f \(Self.noteDir); echo '{not json' >&3; exec 3>&-; true")
        #expect(during.stdout.contains("refused.json"), "\(during.stdout)")
        #expect(!Self.listed(m).contains("refused.json"))
        #expect(Self.listed(m) == first)
    }
}
