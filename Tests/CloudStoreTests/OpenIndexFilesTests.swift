import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A process that reads zone after zone from their index files (the mount, the server) keeps
/// at most `openIndexFiles` of them open, whatever the number of zones, and answers as before
/// from a zone whose index it let go.
@Suite struct OpenIndexFilesTests {
    /// The zone folders under `root` whose index file this process has open, from its
    /// descriptors.
    static func zonesWithOpenIndex(under root: String) -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(fds.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                  target.hasPrefix(root), target.hasSuffix("/index.sqlite") else { return nil }
            return (target as NSString).deletingLastPathComponent
        })
    }

    @Test func aProcessReadingManyZonesKeepsFewIndexFilesOpen() throws {
        let tuning = ZoneTuning.with { $0.openIndexFiles = 3 }
        let t = try TempStore(tuning: tuning)
        let writer = try t.db()
        let zones = (0..<8).map { "Zone\($0)" }
        for (z, zone) in zones.enumerated() {
            try writer.createZone(zone)
            _ = try writer.modify(saving: (0..<20).map { record("r\($0)", zone: zone, ["kind": .string("k\($0 % 3)"), "n": .int64(Int64(z * 100 + $0))]) })
        }
        t.store.waitForRecordFiles()

        let reader = try t.reopen(tuning: tuning, reading: .indexed)
        let db = try reader.container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        let query = RecordQuery(recordType: "Note", predicate: .compare("kind", .equal, .string("k1")),
                                sortDescriptors: [QuerySortDescriptor(key: "n", ascending: false)])
        func answer(_ zone: String) throws -> [String] { try db.query(query, in: zone).records.map(\.recordID.recordName) }
        let expected = (0..<20).filter { $0 % 3 == 1 }.reversed().map { "r\($0)" }
        for round in 0..<2 {
            for zone in zones {
                #expect(try answer(zone) == expected, "round \(round), \(zone)")
                let open = Self.zonesWithOpenIndex(under: t.path)
                #expect(open.count <= 3, "round \(round), \(zone): \(open.count) index files open")
                #expect(open.contains { $0.hasSuffix("/" + zone) }, "the zone just read keeps its index open")
                #expect(reader.openIndexFiles.count <= 3)
            }
        }
        #expect(db.zoneFolder(zones[0]).indexSlot.file == nil, "the zone read longest ago let its index go")

        // A zone whose index was let go takes a save and answers it from its index, opened again.
        _ = try db.modify(saving: [record("new", zone: zones[0], ["kind": .string("k1"), "n": .int64(1_000)])])
        #expect(try answer(zones[0]) == ["new"] + expected)
        #expect(db.zoneFolder(zones[0]).indexSlot.file != nil)
    }

    @Test func theLeastRecentlyUsedIsLetGo() {
        let files = OpenIndexFiles(limit: 2)
        let slots = (0..<3).map { _ in ZoneIndexSlot(openFiles: files) }
        let dir = NSTemporaryDirectory() + "ckfs-open-index-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let opened = (0..<3).compactMap { try? ZoneIndexFile.open(dir + "/index\($0).sqlite", create: true) }
        #expect(opened.count == 3)
        guard opened.count == 3 else { return }
        slots[0].hold(opened[0], openedAt: 1)
        slots[1].hold(opened[1], openedAt: 2)
        _ = slots[0].file(openedAt: 1)
        slots[2].hold(opened[2], openedAt: 3)
        #expect(slots[0].file != nil && slots[1].file == nil && slots[2].file != nil, "slot 1 was used longest ago")
        #expect(files.count == 2)
        slots[2].release()
        #expect(files.count == 1)
    }
}
