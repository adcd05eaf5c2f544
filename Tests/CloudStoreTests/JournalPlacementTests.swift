import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The commit path: on ext4 without a journal, `fdatasync` of the zone's journal also
/// writes the inode table block holding the journal's inode whenever any inode in that block
/// changed. The journal is therefore made with its inode in a block of its own, away from the
/// files every commit changes (see ZoneFolder+JournalFile.swift).
@Suite struct JournalPlacementTests {
    func inode(_ path: String) throws -> UInt64 {
        var st = stat()
        try #require(stat(path, &st) == 0, "stat \(path)")
        return UInt64(st.st_ino)
    }

    /// The files a commit changes besides the journal.
    func busyPaths(_ dir: String) -> [String] {
        [dir, StoreLayout.recordsDirectory(dir), StoreLayout.assetsDirectory(dir), StoreLayout.logFile(dir), StoreLayout.lockFile(dir)]
    }

    /// Which of the busy files share an inode table block with the journal, counting ext4's
    /// usual 16 inodes (256 bytes each) to a 4 KiB block: the disk's own rule, not the code's.
    func sharingTheJournalsBlock(_ dir: String) throws -> [String] {
        let block = (try inode(StoreLayout.journalFile(dir)) - 1) / 16
        return try busyPaths(dir).filter { (try inode($0) - 1) / 16 == block }
    }

    var onExt: Bool { Syscall.fileSystemType(NSTemporaryDirectory()) == ZoneFolder.extFileSystemMagic }

    /// A new zone's first commit makes the journal; its inode shares no block with the zone's
    /// folder, records folder, assets folder, log or lock. Those are made one after the other
    /// just before, so on a quiet file system an inode taken as it comes lands among them (as
    /// in `ckfs bench`'s stores); after many files were deleted ext4 skips the freed inodes
    /// and it may not, so that this rule is kept is shown for sure by the next test.
    @Test func aNewZonesJournalHasAnInodeBlockOfItsOwn() throws {
        let t = try TempStore()
        let db = try t.db()
        try db.save(record("first"))
        let dir = db.zoneDirectory(ZoneID.defaultZoneName)
        let journal = StoreLayout.journalFile(dir)
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == Int(ZoneTuning().journalBytes))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(FileWriter.tempPrefix) }.isEmpty)
        if onExt {
            #expect(try sharingTheJournalsBlock(dir) == [])
        }
        for i in 0..<20 { try db.save(record("n\(i)")) }
        #expect(try JournalTests.frames(dir).map(\.seq).last == 21, "the commits went to the journal")
    }

    /// A journal whose inode is in a busy block (here the surest such inode: the log's own,
    /// the journal made a second name of `log.jsonl`) is made again at the next writer's first
    /// commit and the log is left whole. A writer that had the old journal open (another
    /// process) notices at its next turn and writes its frames into the new one, not into a
    /// file no longer named `journal` (which a crash would lose).
    @Test func aJournalInABusyBlockIsMadeAgainAndOthersFollow() throws {
        let t = try TempStore()
        let a = try t.db()
        for i in 0..<3 { try a.save(record("a\(i)")) }
        let dir = a.zoneDirectory(ZoneID.defaultZoneName)
        let journal = StoreLayout.journalFile(dir), log = StoreLayout.logFile(dir)
        let logBefore = try Data(contentsOf: URL(fileURLWithPath: log))
        #expect(unlink(journal) == 0)
        #expect(link(log, journal) == 0)

        // Another process: its first commit syncs the log and opens the journal.
        let storeB = try t.reopen()
        let b = try storeB.container().database(.private, caller: Caller(userName: "alice", deviceID: "b"))
        try b.save(record("b0"))
        try b.save(record("b1"))
        #expect(try inode(journal) != inode(log))
        if onExt {
            #expect(try sharingTheJournalsBlock(dir) == [])
        }
        let logAfter = try Data(contentsOf: URL(fileURLWithPath: log))
        #expect(logAfter.prefix(logBefore.count) == logBefore, "the log's first entries are as they were")
        #expect(try JournalTests.frames(dir).map(\.seq).last == 5, "b's second commit is in the new journal")

        // The first opening's journal is the old file: its next commit follows b's (a log
        // sync), and the one after that goes into the file now named `journal`.
        try a.save(record("a3"))
        try a.save(record("a4"))
        #expect(try JournalTests.frames(dir).map(\.seq).last == 7)
        let reader = try t.reopen().container().database(.private, caller: Caller(userName: "alice", deviceID: "reader"))
        #expect(reader.fetch(["a0", "a1", "a2", "a3", "a4", "b0", "b1"].map { id($0) }).allSatisfy { $0.1.error == nil })
        #expect(t.store.check().isClean)
    }
}
