import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Several processes writing one zone at once.
@Suite struct ConcurrencyTests {
    static func spawn(_ cli: CLIFixture, _ args: [String]) throws -> Spawned {
        try Spawned(CLIFixture.binary, args + ["--store", cli.store, "--user", "alice"], stderr: .output)
    }

    @Test func twoWritersIntoOneZoneLoseNothing() throws {
        let cli = try CLIFixture()
        let a = try Self.spawn(cli, ["debug", "write-loop", "--prefix", "A", "--count", "150"])
        let b = try Self.spawn(cli, ["debug", "write-loop", "--prefix", "B", "--count", "150"])
        for p in [a, b] {
            let text = p.outputToEnd
            #expect(p.wait() == 0, "\(text)")
        }
        let names = try cli.database().allRecords().map(\.recordID.recordName)
        #expect(names.count == 300)
        #expect(Set(names) == Set((0..<150).flatMap { ["A-\($0)", "B-\($0)"] }))
        // Change tags are the zone's sequence: all distinct.
        let tags = try cli.database().allRecords().compactMap(\.recordChangeTag)
        #expect(Set(tags).count == 300)
        #expect(cli.run(["fsck"]).status == 0)
    }

    @Test func conflictingUpdatesComeBackAsServerRecordChanged() throws {
        let cli = try CLIFixture()
        let times = 250
        let a = try Self.spawn(cli, ["debug", "counter", "--times", "\(times)"])
        let b = try Self.spawn(cli, ["debug", "counter", "--times", "\(times)"])
        var conflicts = 0
        for p in [a, b] {
            let text = p.outputToEnd
            // Any error other than serverRecordChanged ends the counter with status 1.
            #expect(p.wait() == 0, "\(text)")
            conflicts += Int(text.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        }
        let counter = try cli.database().record(for: RecordID(recordName: "counter"))
        #expect(counter["n"] == .int64(Int64(2 * times)), "no increment lost")
        #expect(conflicts > 0, "the two writers overlapped and saw conflicts")
        print("counter: \(2 * times) increments by two processes, \(conflicts) conflicts retried")
    }
}
