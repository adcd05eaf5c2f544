import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs kv set` processes racing on a nearly full key-value store: each one that
/// exits 0 has its value on disk, and each one whose write did not fit says `quotaExceeded`,
/// whether it found the store full when it read it or only when its write met the others'.
@Suite struct KeyValueRaceTests {
    static let racers = 8
    static let valueLength = 60_000

    /// Starts `ckfs kv set KEY -` processes that all wait on standard input, then gives them
    /// their values at once: each has read the store before the first of them writes.
    func race(_ cli: CLIFixture, keys: [String], values: [String]) throws -> [CLIFixture.Output] {
        let processes = try keys.map {
            try Spawned(CLIFixture.binary, ["kv", "set", $0, "-", "--store", cli.store, "--user", "alice"], input: true, stderr: .pipe)
        }
        // Every process is started and blocked reading its value.
        Thread.sleep(forTimeInterval: 1.0)
        for (p, value) in zip(processes, values) {
            p.write(value)
            p.closeInput()
        }
        return processes.map { p in
            let status = p.wait()
            return CLIFixture.Output(status: status, stdout: p.outputToEnd, stderr: p.errorOutputToEnd)
        }
    }

    /// The store's keys, each with the first letter and length of its string value, read by
    /// Python's plistlib.
    func stored(_ path: String) throws -> [String: String] {
        let out = try runPython("""
        import json, plistlib
        v = plistlib.load(open("\(path)", "rb"))
        print(json.dumps({k: f"{s[:1]}{len(s)}" for k, s in v.items() if isinstance(s, str)}))
        """)
        guard case .object(let o)? = try? JSONParser.parse(out) else { throw CKError(.internalError, "python printed \(out)") }
        return o.compactMapValues(\.stringValue)
    }

    @Test func everyWriteThatExitsZeroIsStored() throws {
        let cli = try CLIFixture()
        let path = try keyValueFilePath(Store.open(at: cli.store).container(), user: "alice")
        let overhead = "<string></string>".utf8.count
        let total = KeyValueLimits().maxTotalBytes
        // Room for one racer's value and not two.
        let filler = String(repeating: "f", count: total - overhead - (Self.valueLength + overhead) - (Self.valueLength / 2))
        let letters = Array("abcdefghijklmnop")
        var dropsSeen = 0
        for round in 0..<3 {
            let kv = try KeyValueStore(store: Store.open(at: cli.store), user: "alice", synchronizeEvery: nil)
            for key in kv.entries.keys { try kv.removeValue(forKey: key) }
            try kv.setValue(.string(filler), forKey: "filler")
            try kv.sync()

            let keys = (0..<Self.racers).map { "r\($0)" }
            let values = (0..<Self.racers).map { String(repeating: letters[$0], count: Self.valueLength) }
            let results = try race(cli, keys: keys, values: values)
            let onDisk = try stored(path)
            #expect(onDisk["filler"] == "f\(filler.count)", "round \(round): the filler stays")
            var succeeded = 0
            for (i, r) in results.enumerated() {
                if r.status == 0 {
                    succeeded += 1
                    #expect(onDisk[keys[i]] == "\(letters[i])\(Self.valueLength)",
                            "round \(round): \(keys[i]) printed \"\(r.stdout.trimmingCharacters(in: .newlines))\" and exited 0, but the store has \(onDisk[keys[i]] ?? "no such key")")
                } else {
                    #expect(r.stderr.contains("ckfs: quotaExceeded:"), "round \(round): \(keys[i]) exited \(r.status): \(r.stderr)")
                    #expect(onDisk[keys[i]] == nil, "round \(round): \(keys[i]) failed but is stored")
                    if r.stderr.contains("dropped") { dropsSeen += 1 }
                }
            }
            let storedRacers = keys.filter { onDisk[$0] != nil }
            #expect(storedRacers.count == 1, "round \(round): one value fits; stored \(storedRacers)")
            #expect(succeeded == storedRacers.count, "round \(round): \(succeeded) exited 0, \(storedRacers.count) stored")
        }
        // Informational: how many refusals came from a write meeting the others' (the race).
        print("KeyValueRaceTests: \(dropsSeen) writes dropped at sync in 3 rounds of \(Self.racers)")
    }
}
