import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// `ckfs mount --read-only` lets the kernel open files itself (no OPEN, FLUSH or
/// RELEASE request), so a warm `cat` or `tar` costs no round trip to the daemon; reads still
/// show every record whole and outside saves still show, through the watcher's invalidations.
@Suite(.serialized) struct ReadOnlyMountTests {
    /// Fifty `cat`s of one record, after a first one has put its name, size and pages in the
    /// kernel's caches.
    static func catFiftyTimes(_ m: MountFixture) throws -> Int {
        let file = "M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json"
        try #require(m.sh("cat \(file) > /dev/null").status == 0)
        return try m.daemonWriteCalls(during: "for i in $(seq 50); do cat \(file) > /dev/null; done")
    }

    @Test func aReadOnlyMountOpensFilesWithoutTheDaemon() throws {
        // The control: a read-write mount answers an OPEN and a RELEASE for every cat.
        let rw = try MountFixture()
        let rwReplies = try Self.catFiftyTimes(rw)
        #expect(rwReplies >= 100, "\(rwReplies) replies for 50 cats on a read-write mount")

        let ro = try MountFixture(mountArgs: ["--read-only"])
        let roReplies = try Self.catFiftyTimes(ro)
        #expect(roReplies < 10, "\(roReplies) replies for 50 cats on a read-only mount")
        #expect(ro.mountLog.contains("the kernel opens files itself"), "\(ro.mountLog)")

        // Every record reads whole, byte for byte the canonical text.
        var compared = 0
        for scope in [DatabaseScope.public, .private] {
            let db = try ro.database(scope)
            for zone in try db.zones().map(\.zoneID.zoneName) {
                for r in try db.allRecords(in: zone) {
                    let path = ro.mount + "/\(MountFixture.container)/\(scope == .public ? "public" : "private")/\(zone)/\(r.recordType)/\(r.recordID.recordName).json"
                    #expect(FileManager.default.contents(atPath: path).map(Array.init) == RecordCoding.fileBytes(r), "\(path)")
                    compared += 1
                }
            }
        }
        #expect(compared >= 4)
        let write = ro.sh("echo '{}' > M/\(MountFixture.container)/public/_defaultZone/Note/welcome.json")
        #expect(write.status != 0 && write.stderr.contains("Read-only file system"), "\(write.stderr)")
    }

    @Test func anOutsideSaveShowsInAReadOnlyMount() throws {
        let m = try MountFixture(mountArgs: ["--read-only"])
        let path = m.publicZone + "/Note/welcome.json"
        for i in 0..<5 {
            #expect(m.read(path) != nil)
            let r = m.cli(["record", "save", "--database", "public", "--policy", "all-keys"],
                          input: #"{"recordType":"Note","recordName":"welcome","fields":{"title":"cli \#(i) \#(String(repeating: "x", count: i * 50))"}}"#)
            #expect(r.status == 0)
            // No open asks the daemon now: the watcher drops the kernel's pages and sizes when
            // the zone's log changes, a moment after the save.
            var text = ""
            let deadline = Date().addingTimeInterval(30)
            repeat {
                text = m.read(path) ?? ""
                if text.contains("\"value\": \"cli \(i) ") { break }
                Thread.sleep(forTimeInterval: 0.02)
            } while Date() < deadline
            #expect(text.contains("\"value\": \"cli \(i) "), "round \(i): \(text.prefix(200))")
            #expect((try? JSONParser.parse(Array(text.utf8))) != nil, "whole JSON, not cut at an old size")
        }
    }

    @Test func aRecordLargerThanOneReadReadsWhole() throws {
        let m = try MountFixture(mountArgs: ["--read-only"])
        let big = String(repeating: "0123456789abcdef", count: 40_000) // 640 KB, five 128 KiB reads
        let r = m.cli(["record", "save", "--database", "public"],
                      input: #"{"recordType":"Note","recordName":"big","fields":{"body":"\#(big)"}}"#)
        try #require(r.status == 0, "\(r.stderr)")
        let db = try m.database(.public)
        let record = try db.record(for: RecordID(recordName: "big", zoneID: db.zoneID(ZoneID.defaultZoneName)))
        let path = m.publicZone + "/Note/big.json"
        var bytes: [UInt8]?
        let deadline = Date().addingTimeInterval(30)
        repeat {
            bytes = FileManager.default.contents(atPath: path).map(Array.init)
            if bytes != nil { break }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        #expect(bytes == RecordCoding.fileBytes(record))
        let copy = m.sh("cp M/\(MountFixture.container)/public/_defaultZone/Note/big.json big.json && python3 -c \"import json; print(len(json.load(open('big.json'))['fields']['body']['value']))\"")
        #expect(copy.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(big.count), "\(copy.stderr)")
    }
}
