import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// An asset's life in a zone: stored by the save that names it (a refused or failed save
/// leaves no file), named only if the zone holds it, removed once no record and no entry of
/// the log names it (at compaction, and by fsck).
@Suite struct AssetLifecycleTests {
    /// A file of `bytes` random bytes in the store's folder.
    private func file(_ t: TempStore, _ name: String, bytes: Int) throws -> String {
        let path = t.path + "/" + name
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? random.close() }
        try random.readData(ofLength: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func assetFiles(_ db: Database) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: StoreLayout.assetsDirectory(db.zoneDirectory(ZoneID.defaultZoneName)))) ?? [])
            .filter { !$0.hasPrefix(".") }
    }

    @Test func anAssetNamedByItsChecksumMustBeInTheZone() throws {
        let t = try TempStore()
        let db = try t.db()
        let never = AssetHasher.sha256Hex(Array("never uploaded".utf8))
        let r = try db.modify(saving: [record("fake", ["img": .asset(Asset(fileChecksum: never, size: 14))])])
        let error = try #require(r.saveResults[0].1.error)
        #expect(error.code == .invalidArguments && error.message.contains("img") && error.message.contains(never), "\(error)")
        let list = try db.modify(saving: [record("fakes", ["imgs": .list(.asset, [.asset(Asset(fileChecksum: never, size: 1))])])])
        #expect(list.saveResults[0].1.error?.code == .invalidArguments)
        // One the zone holds is taken, at the size its file has whatever the value says.
        let path = try file(t, "in.bin", bytes: 1000)
        let stored = try db.save(record("real", ["img": .asset(Asset(file: path))]))
        guard case .asset(let a)? = stored["img"] else { Issue.record("no asset"); return }
        let again = try db.save(record("copy", ["img": .asset(Asset(fileChecksum: a.fileChecksum, size: 1))]))
        guard case .asset(let b)? = again["img"] else { Issue.record("no asset"); return }
        #expect(b.fileChecksum == a.fileChecksum && b.size == 1000)
        #expect(t.store.check().damage.isEmpty)
    }

    @Test func aRefusedSaveLeavesNoFile() throws {
        var settings = StoreSettings()
        settings.privateQuotaBytes = 3_000_000
        let t = try TempStore(settings: settings)
        let db = try t.db()
        var saved = 0, refused = 0
        for i in 0..<8 {
            let r = try db.modify(saving: [record("p\(i)", ["img": .asset(Asset(file: try file(t, "f\(i)", bytes: 1_000_000)))])])
            if let e = r.saveResults[0].1.error { #expect(e.code == .quotaExceeded); refused += 1 } else { saved += 1 }
        }
        #expect(saved == 2 && refused == 6)
        #expect(assetFiles(db).count == 2, "\(assetFiles(db))")
        // An atomic batch one of whose records fails: none of its new files stays.
        let batch = try db.modify(saving: [record("q1", ["img": .asset(Asset(file: try file(t, "g1", bytes: 10)))]),
                                           record("q2", ["bad": .reference(Reference(recordName: "nobody", action: .deleteSelf))])],
                                  options: ModifyOptions(atomic: true))
        #expect(batch.saveResults.allSatisfy { $0.1.error != nil })
        #expect(assetFiles(db).count == 2)
        #expect(t.store.check().repaired.isEmpty)
    }

    @Test func anAssetGoesWhenTheLogNoLongerNamesIt() throws {
        var settings = StoreSettings()
        settings.privateQuotaBytes = 5_000_000
        let t = try TempStore(settings: settings, tuning: .with { $0.compactLogBytes = 4096 })
        let db = try t.db()
        // One content in two records: it stays while either holds it.
        let shared = try file(t, "shared", bytes: 5000)
        try db.save(record("keep", ["img": .asset(Asset(file: shared))]))
        try db.save(record("drop", ["img": .asset(Asset(file: shared))]))
        for i in 0..<20 {
            try db.save(record("big\(i)", ["img": .asset(Asset(file: try file(t, "b\(i)", bytes: 1_000_000)))]))
            #expect(try db.modify(saving: [], deleting: [id("big\(i)")]).error == nil)
        }
        try #require(try db.modify(saving: [], deleting: [id("drop")]).error == nil)
        // The log still holds entries naming some of them until it is compacted past them.
        for i in 0..<40 { try db.save(record("n\(i)", ["t": .string(String(repeating: "x", count: 300))])) }
        t.store.waitForRecordFiles()
        #expect(assetFiles(db) == [AssetHasher.sha256Hex(Array(FileManager.default.contents(atPath: shared)!))], "\(assetFiles(db).count) files")
        #expect(try db.record(for: id("keep"))["img"] != nil)
        let report = t.store.check()
        #expect(report.damage.isEmpty && report.repaired.isEmpty, "\(report.damage) \(report.repaired)")
    }

    @Test func fsckRemovesFilesNothingNames() throws {
        let t = try TempStore()
        let db = try t.db()
        let path = try file(t, "kept", bytes: 100)
        try db.save(record("r", ["img": .asset(Asset(file: path))]))
        // What a save killed between storing its file and its commit leaves.
        let dir = StoreLayout.assetsDirectory(db.zoneDirectory(ZoneID.defaultZoneName))
        let orphan = AssetHasher.sha256Hex(Array("orphan".utf8))
        try Data("orphan".utf8).write(to: URL(fileURLWithPath: dir + "/" + orphan))
        // An asset named only by an entry the log still holds stays: a change fetch may give it.
        let gone = try file(t, "gone", bytes: 50)
        try db.save(record("g", ["img": .asset(Asset(file: gone))]))
        #expect(try db.modify(saving: [], deleting: [id("g")]).error == nil)
        let report = t.store.check()
        #expect(report.repaired.contains { $0.contains("removed 1 asset file (6 bytes)") }, "\(report.repaired)")
        #expect(assetFiles(db).count == 2 && !assetFiles(db).contains(orphan))
        #expect(t.store.check().repaired.isEmpty)
    }
}
