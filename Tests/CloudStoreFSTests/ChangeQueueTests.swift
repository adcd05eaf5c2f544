import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudStore
@testable import CloudStoreFS

/// A zone is quiet (requests skip the stat of its log) only while its folder is
/// watched and nothing was written to it since the view's last look began, queued or read.
@Suite struct ChangeQueueTests {
    /// Drains the queue as the watcher does, naming `zone` for every event; returns how many
    /// events it read.
    static func drain(_ queue: ChangeQueue, as zone: StoreView.ZoneRef) -> Int {
        var count = 0
        queue.drain { () -> ChangeQueue.Events in
            let report = queue.commits.read()
            count = report.written.count + (report.overflowed ? 1 : 0)
            return ChangeQueue.Events(touched: count > 0 ? [zone] : [])
        }
        return count
    }

    /// A look at the zone from its start to its end, as ``StoreView/catalog(_:_:)`` makes one.
    static func look(_ queue: ChangeQueue, at zone: StoreView.ZoneRef) {
        queue.looked(at: zone, since: queue.looking(at: zone))
    }

    /// The welcome note's text, read through the view as `cat` reads it: open, read, release.
    static func welcome(_ f: StoreViewTests.Fixture) throws -> String {
        let ino = try f.inode(StoreViewTests.noteDir + "/welcome.json")
        let fh = try f.view.open(ino, flags: O_RDONLY, caller: f.me).handle
        defer { f.view.release(handle: fh) }
        return String(decoding: try f.view.read(handle: fh, count: 1 << 20, offset: 0), as: UTF8.self)
    }

    /// Runs `body` with a new queue, a temporary folder for zone `z` to watch, and a zone
    /// `other`.
    static func withQueue(_ body: (ChangeQueue, String, StoreView.ZoneRef, StoreView.ZoneRef) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "ckfs-queue-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let database = DatabaseKey(container: "c", scope: .private, user: "u")
        let queue = ChangeQueue(commits: FolderWatch())
        try #require(queue.commits.isAvailable)
        try body(queue, dir, StoreView.ZoneRef(database: database, zone: "z"), StoreView.ZoneRef(database: database, zone: "other"))
    }

    @Test func aZoneIsQuietOnlyWhileNothingIsWrittenToItsFolder() throws { try Self.withQueue { queue, dir, zone, other in

        // Not watched: a look proves nothing.
        Self.look(queue, at: zone)
        #expect(!queue.isQuiet(zone))

        try #require((queue.commits as! FolderWatch<ChangeQueue.Followed>).follow(.zone(zone), folder: dir))
        queue.watched(zone)
        Self.look(queue, at: zone)
        #expect(queue.isQuiet(zone))
        #expect(!queue.isQuiet(other), "never looked at")

        // A write is queued inside the write system call: not quiet before anyone reads it.
        #expect(FileManager.default.createFile(atPath: dir + "/log.jsonl", contents: Data("a\n".utf8)))
        #expect(!queue.isQuiet(zone))
        #expect(Self.drain(queue, as: zone) > 0)
        #expect(!queue.isQuiet(zone), "read, and the zone was named")

        // The next look makes it quiet again, until the next write.
        Self.look(queue, at: zone)
        #expect(queue.isQuiet(zone))
        let fd = open(dir + "/log.jsonl", O_WRONLY | O_APPEND)
        try #require(fd >= 0)
        #expect(write(fd, "b\n", 2) == 2)
        close(fd)
        #expect(!queue.isQuiet(zone))
        _ = Self.drain(queue, as: zone)

        // A failed look, an overflow, a lost watch: not quiet.
        Self.look(queue, at: zone)
        queue.forget(zone)
        #expect(!queue.isQuiet(zone))
        Self.look(queue, at: zone)
        queue.drain { ChangeQueue.Events(overflowed: true) }
        #expect(!queue.isQuiet(zone))
        queue.drain { ChangeQueue.Events(unwatched: [zone]) }
        Self.look(queue, at: zone)
        #expect(!queue.isQuiet(zone), "the watch is gone")
        queue.watched(zone)
        Self.look(queue, at: zone)
        #expect(queue.isQuiet(zone))
        queue.stop()
        #expect(!queue.isQuiet(zone))
    } }

    /// A look proves the zone quiet only once it has finished, and only if no event for the
    /// zone was read while it ran: the watcher, woken by a save, reads the event and starts
    /// its own look, and a request that found the zone quiet in between served the catalog
    /// from before that save (`MountTests.anEditLoopAlwaysReadsItsLastSave`).
    @Test func aLookInProgressProvesNothing() throws { try Self.withQueue { queue, dir, zone, other in
        try #require((queue.commits as! FolderWatch<ChangeQueue.Followed>).follow(.zone(zone), folder: dir))
        queue.watched(zone)
        queue.watched(other)

        // Begun, not finished: not quiet.
        let first = queue.looking(at: zone)
        #expect(first != nil)
        #expect(!queue.isQuiet(zone))
        // A save while the look runs, its event read (by the watcher): the look's end proves
        // nothing, since it may have read the log before the save.
        #expect(FileManager.default.createFile(atPath: dir + "/log.jsonl", contents: Data("a\n".utf8)))
        // A look begun after the save but before its event was read: counted as spoiled too
        // (one more look later, never a stale answer).
        let second = queue.looking(at: zone)
        #expect(Self.drain(queue, as: zone) > 0)
        queue.looked(at: zone, since: first)
        #expect(!queue.isQuiet(zone), "a look that began before the event read")
        queue.looked(at: zone, since: second)
        #expect(!queue.isQuiet(zone), "begun before the event was read")
        Self.look(queue, at: zone)
        #expect(queue.isQuiet(zone), "a look begun after the read")

        // Another zone's event does not spoil this zone's look; an overflow does.
        let third = queue.looking(at: zone)
        queue.drain { ChangeQueue.Events(touched: [other]) }
        queue.looked(at: zone, since: third)
        #expect(queue.isQuiet(zone))
        let fourth = queue.looking(at: zone)
        queue.drain { ChangeQueue.Events(overflowed: true) }
        queue.looked(at: zone, since: fourth)
        #expect(!queue.isQuiet(zone))
        queue.stop()
    } }

    /// The view with a real watch on the zone's folder, as the mount's watcher sets it up, and
    /// a save from another `Store` (as another process makes it), with nobody reading the
    /// queue: the next open still shows the new text.
    @Test func aQuietZoneStillShowsAnOutsideSaveAtTheNextOpen() throws {
        let f = try StoreViewTests.Fixture()
        func text() throws -> String { try Self.welcome(f) }
        _ = try text()
        let zone = try #require(f.view.openZones.first)
        try #require(f.view.changes.commits.follow(.zone(zone), zone: f.publicDB.zoneStorage("_defaultZone")))
        f.view.changes.watched(zone)

        let other = try Store.open(at: f.root)
        let elsewhere = try other.container().database(.public, caller: Caller(userName: Caller.currentOSUserName))
        for i in 0..<5 {
            // Between rounds: the other store's applier writes its marker after the save, and
            // the watcher catches up.
            other.waitForRecordFiles()
            _ = Self.drain(f.view.changes, as: zone)
            _ = try text()
            #expect(f.view.changes.isQuiet(zone), "round \(i): the open looked, and nothing was written since")
            var r = try elsewhere.record(for: f.welcomeID)
            r["title"] = .string("elsewhere \(i)")
            _ = try elsewhere.save(r, policy: .allKeys)
            #expect(!f.view.changes.isQuiet(zone))
            #expect(try text().contains("\"value\": \"elsewhere \(i)\""), "round \(i)")
        }
    }
}

extension ChangeQueueTests {
    /// A save the queue never hears of (a store on a network file system written from another
    /// machine) still shows: the watcher's once-a-second sweep looks at every zone whatever
    /// the queue says. The save is made in a copy of the store and its log line and markers
    /// are written into this store through hard links in another folder, so the zone folder's
    /// watch gets no event.
    @Test func theSweepShowsASaveTheQueueNeverHeardOf() throws {
        let f = try StoreViewTests.Fixture()
        func text() throws -> String { try Self.welcome(f) }
        _ = try text()
        let zone = try #require(f.view.openZones.first)
        let watcher = ChangeWatcher(view: f.view)
        watcher.start()
        defer { watcher.stop() }
        var deadline = Date().addingTimeInterval(30)
        while !f.view.changes.isQuiet(zone) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            _ = try text()
        }
        try #require(f.view.changes.isQuiet(zone), "the watcher watches the zone")

        // The save, made in a copy of the store.
        let copy = f.root + "-copy"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: f.root, toPath: copy)
        let zoneDir = (try f.publicDB.zoneStorage("_defaultZone") as! ZoneFolder).directory
        let copyZoneDir = copy + zoneDir.dropFirst(f.root.count)
        let before = try #require(FileManager.default.contents(atPath: StoreLayout.logFile(zoneDir)))
        let other = try Store.open(at: copy)
        let db = try other.container().database(.public, caller: Caller(userName: Caller.currentOSUserName))
        var r = try db.record(for: f.welcomeID)
        r["title"] = .string("unheard")
        _ = try db.save(r, policy: .allKeys)
        other.waitForRecordFiles()
        let after = try #require(FileManager.default.contents(atPath: StoreLayout.logFile(copyZoneDir)))
        try #require(after.count > before.count && after.prefix(before.count) == before)
        // The commit marker only: the copy's apply marker speaks of the copy's record files.
        let marker = try #require(FileManager.default.contents(atPath: StoreLayout.lockFile(copyZoneDir))).prefix(CommitMarker.size)

        // Written into this store through links elsewhere: no event on the zone's folder, as
        // a queue of the test's own, which nobody reads, shows (the view's own queue cannot:
        // its sweep forgets the zone's quiet state once a second).
        let probe = ChangeQueue(commits: FolderWatch())
        try #require((probe.commits as! FolderWatch<ChangeQueue.Followed>).follow(.zone(zone), folder: zoneDir))
        probe.watched(zone)
        Self.look(probe, at: zone)
        let links = f.root + "-links"
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: links) }
        try #require(link(StoreLayout.logFile(zoneDir), links + "/log") == 0)
        try #require(link(StoreLayout.lockFile(zoneDir), links + "/lock") == 0)
        let log = try #require(FileHandle(forWritingAtPath: links + "/log"))
        log.seekToEndOfFile()
        log.write(after.suffix(from: before.count))
        try log.close()
        let lock = try #require(FileHandle(forWritingAtPath: links + "/lock"))
        lock.write(marker)
        try lock.close()
        #expect(probe.isQuiet(zone), "the zone's folder heard nothing")

        deadline = Date().addingTimeInterval(30)
        var shown = try text()
        while !shown.contains("\"value\": \"unheard\"") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            shown = try text()
        }
        #expect(shown.contains("\"value\": \"unheard\""), "\(shown.prefix(300))")
    }

    /// A zone its owner and a participant both show is one folder followed as two zones: a
    /// write there reaches both, so neither stays quiet through it.
    @Test func twoZonesOfOneFolderBothHearOfAWrite() throws { try Self.withQueue { queue, dir, zone, _ in
        let participant = StoreView.ZoneRef(database: DatabaseKey(container: "c", scope: .shared, user: "bob", owner: "_ann"), zone: "z")
        for z in [zone, participant] {
            try #require((queue.commits as! FolderWatch<ChangeQueue.Followed>).follow(.zone(z), folder: dir))
            queue.watched(z)
            Self.look(queue, at: z)
            #expect(queue.isQuiet(z))
        }
        #expect(FileManager.default.createFile(atPath: dir + "/log.jsonl", contents: Data("a\n".utf8)))
        var written: [ChangeQueue.Followed] = []
        queue.drain { () -> ChangeQueue.Events in
            let report = queue.commits.read()
            written = report.written
            return ChangeQueue.Events(touched: report.written.compactMap { if case .zone(let z) = $0 { z } else { nil } })
        }
        #expect(Set(written) == [.zone(zone), .zone(participant)])
        #expect(!queue.isQuiet(zone) && !queue.isQuiet(participant))
    } }

    /// A query the engine makes in the daemon's process refreshes the zone's one catalog too:
    /// the view hears of what that refresh took in, so a record it read before is read anew.
    @Test func aChangeAQueryTookInReachesTheView() throws {
        let root = NSTemporaryDirectory() + "ckfs-view-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Zones in memory: a query refreshes the catalog the view reads.
        let store = try Store.create(at: root, reading: .inMemory)
        try DemoData.fill(store, caller: Caller(userName: Caller.currentOSUserName))
        let view = StoreView(store: store, mountPoint: "/mnt")
        let me = CallerContext(uid: geteuid(), gid: getegid(), pid: getpid())
        var ino = InodeTable.rootInode
        for part in (StoreViewTests.noteDir + "/welcome.json").split(separator: "/") {
            ino = try view.lookup(parent: ino, name: String(part), caller: me).attributes.inode
        }
        func text() throws -> String {
            let fh = try view.open(ino, flags: O_RDONLY, caller: me).handle
            defer { view.release(handle: fh) }
            return String(decoding: try view.read(handle: fh, count: 1 << 20, offset: 0), as: UTF8.self)
        }
        #expect(!(try text()).contains("queried"))
        let db = try store.container().database(.public, caller: Caller(userName: Caller.currentOSUserName))
        let id = RecordID(recordName: "welcome", zoneID: ZoneID(zoneName: "_defaultZone", ownerName: Database.publicOwnerName))
        var welcome = try db.record(for: id)
        welcome["text"] = .string("queried")
        try db.save(welcome)
        _ = try db.query(RecordQuery(recordType: "Note"))
        #expect(try text().contains("queried"))
    }
}
