import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The mount's request loop (`Sources/CFuse3/loop.h`). One receiver serves requests
/// and spins a moment after each; a request that comes to wait hands the receiving on first.
@Suite(.serialized) struct RequestLoopTests {
    /// A save through the mount that waits for its zone (another process holds the zone's
    /// lock) must not stop `cat`, `ls` and `stat` of other files: they answer while it waits,
    /// and the edit is saved once the lock is free. Both ways an edit is saved: `sed -i`'s
    /// rename (handed on before it starts) and a write closed in place (its FLUSH is served by
    /// the receiver until the save says it will wait). A loop that waited on the receiver
    /// would leave `cat` behind the save.
    @Test(arguments: ["sed", "close"]) func aSaveWaitingForItsZoneDoesNotHoldUpReads(_ how: String) throws {
        let m = try MountFixture()
        let zone = "M/\(MountFixture.container)/private/Notes"
        let command = how == "sed"
            ? "sed -i 's/milk, bread/milk, eggs, bread/' \(zone)/Note/groceries.json"
            : "python3 -c \"f = open('\(zone)/Note/groceries.json', 'r+'); t = f.read().replace('milk, bread', 'milk, eggs, bread'); f.seek(0); f.truncate(); f.write(t); f.close()\""
        let script = """
            L=$(find store -path '*/private/*/zones/Notes/lock')
            [ -f "$L" ] || { echo "no lock file for Notes"; exit 1; }
            flock "$L" sleep 3 &
            sleep 0.3
            ( \(command); echo "edit done $?" ) &
            sleep 0.3
            s=$(date +%s%N)
            timeout 2 cat \(zone)/Task/call-mum.json > /dev/null && echo "cat ok $(( ($(date +%s%N) - s) / 1000000 ))"
            timeout 2 ls -l \(zone)/Task > /dev/null && echo "ls ok"
            timeout 2 stat M/\(MountFixture.container) > /dev/null 2>&1 && echo "stat ok"
            wait
            """
        let r = m.sh(script)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let cat = try #require(lines.firstIndex { $0.hasPrefix("cat ok") }, "cat did not answer while the save waited: \(lines) \(r.stderr)")
        let edit = try #require(lines.firstIndex { $0.hasPrefix("edit done") }, "\(lines) \(r.stderr)")
        #expect(cat < edit, "cat answered only after the save: \(lines)")
        #expect(lines.contains("ls ok") && lines.contains("stat ok"), "\(lines)")
        #expect(lines.firstIndex(of: "ls ok").map { $0 < edit } == true, "\(lines)")
        #expect(lines[edit] == "edit done 0", "\(lines)")
        // The edit waited for the lock and then saved.
        let db = try m.database(.private)
        let record = try db.record(for: RecordID(recordName: "groceries", zoneID: db.zoneID("Notes")))
        #expect(record["body"] == .string("milk, eggs, bread, apples"), "\(String(describing: record["body"]))")
    }

    /// The receiver stays awake only a moment after a request: a mount that has just served
    /// hundreds of opens spends (almost) no CPU a second later.
    @Test func anIdleMountSpendsNoCPU() throws {
        let m = try MountFixture()
        let file = m.publicZone + "/Note/welcome.json"
        let r = m.sh("for i in $(seq 300); do cat '\(file)' > /dev/null; done")
        #expect(r.status == 0, "\(r.stderr)")
        func cpuTicks() throws -> Int {
            let stat = try String(contentsOfFile: "/proc/\(m.pid)/stat", encoding: .utf8)
            // Fields after the command name in parentheses; utime and stime are the 14th and 15th.
            let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
            return try #require(Int(fields[11])) + #require(Int(fields[12]))
        }
        Thread.sleep(forTimeInterval: 0.2)
        let before = try cpuTicks()
        Thread.sleep(forTimeInterval: 1)
        let used = try cpuTicks() - before
        let hz = Int(sysconf(Int32(_SC_CLK_TCK)))
        #expect(used * 1000 / hz <= 50, "the idle daemon used \(used * 1000 / hz) ms of CPU in a second")
    }
}
