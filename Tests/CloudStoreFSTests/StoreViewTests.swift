import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudStore
@testable import CloudStoreFS

/// The view without the kernel: the calls libfuse would make, in the order tools make them.
@Suite struct StoreViewTests {
    final class Fixture: @unchecked Sendable {
        let root = NSTemporaryDirectory() + "ckfs-view-" + UUID().uuidString
        let store: Store
        let view: StoreView
        let me = CallerContext(uid: geteuid(), gid: getegid(), pid: getpid())

        init() throws {
            // As `ckfs mount` opens it: zones read from their index files.
            store = try Store.create(at: root, reading: .indexed)
            try DemoData.fill(store, caller: Caller(userName: Caller.currentOSUserName))
            view = StoreView(store: store, mountPoint: "/mnt")
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        /// Looks a path up from the root, as the kernel does one name at a time.
        func inode(_ path: String) throws(FSError) -> UInt64 {
            var ino = InodeTable.rootInode
            for part in path.split(separator: "/") {
                ino = try view.lookup(parent: ino, name: String(part), caller: me).attributes.inode
            }
            return ino
        }

        func write(_ fh: UInt64, _ text: String) throws {
            let bytes = Array(text.utf8)
            _ = try bytes.withUnsafeBytes { b in try view.write(handle: fh, bytes: b, offset: 0) }
        }

        var publicDB: Database { get throws { try store.container().database(.public, caller: Caller(userName: Caller.currentOSUserName)) } }
        var welcomeID: RecordID { RecordID(recordName: "welcome", zoneID: ZoneID(zoneName: "_defaultZone", ownerName: Database.publicOwnerName)) }
    }

    static let noteDir = "iCloud.local.ckfs/public/_defaultZone/Note"

    /// A type folder is read a reply at a time: each entry's record is read when the kernel
    /// reads that far (a record deleted meanwhile is left out, the offsets go on), the zone's
    /// records are never held by the view, and an inode is bound only once the kernel takes a
    /// lookup of it.
    @Test func aTypeFolderIsListedAReplyAtATime() throws {
        let f = try Fixture()
        let db = try f.publicDB
        let names = (0..<12).map { "item-\($0)" }
        _ = try db.modify(saving: names.map { Record(recordType: "Item", recordID: RecordID(recordName: $0, zoneID: f.welcomeID.zoneID)) })
        let dir = try f.inode("iCloud.local.ckfs/public/_defaultZone/Item")
        let fh = try f.view.openDirectory(dir, caller: f.me).handle
        let first = try f.view.readDirectory(handle: fh, from: 0, atMost: 5)
        #expect(first.map(\.name) == names.sorted().prefix(5).map { $0 + ".json" })
        #expect(first.map(\.offset) == [1, 2, 3, 4, 5])
        #expect(f.view.inodes.counts.records == 0, "no lookup taken, nothing bound")
        let gone = names.sorted()[6]
        try db.delete(RecordID(recordName: gone, zoneID: f.welcomeID.zoneID))
        var rest: [DirectoryEntry] = []
        var offset = first.last!.offset
        while case let page = try f.view.readDirectory(handle: fh, from: offset, atMost: 3), !page.isEmpty {
            rest += page
            offset = page.last!.offset
        }
        #expect(rest.map(\.name) == names.sorted().dropFirst(5).filter { $0 != gone }.map { $0 + ".json" })
        #expect(rest.first?.offset == 6 && rest.last?.offset == 12, "the deleted record's offset is skipped, not reused")
        for e in first + rest { f.view.noteLookup(e) }
        #expect(f.view.inodes.counts.records == 11)
        for e in first + rest { f.view.forget(e.attributes.inode, count: 1) }
        #expect(f.view.inodes.counts.records == 0)
        f.view.releaseDirectory(handle: fh)
        let catalog = try f.view.catalog(DatabaseKey(container: "iCloud.local.ckfs", scope: .public, user: ""), "_defaultZone")
        #expect(!catalog.holdsRecords, "an indexed catalog lists from the index, not from records in memory")
    }

    /// A record file that cannot be read fails its folder's listing (EIO): `ls`, `tar` and
    /// `rsync` report it instead of finishing without the file.
    @Test func anUnreadableRecordFailsItsFolderListing() throws {
        let f = try Fixture()
        let db = try f.publicDB
        _ = try db.modify(saving: ["a", "b", "c"].map { Record(recordType: "Item", recordID: RecordID(recordName: $0, zoneID: f.welcomeID.zoneID)) })
        f.store.waitForRecordFiles()
        /// Lists the folder through a new opening of the store, as a new daemon would (nothing
        /// of the records cached): the names listed, and the error that stopped it.
        func list() -> ([String], FSError?) {
            var names: [String] = []
            do {
                let view = StoreView(store: try Store.open(at: f.root, reading: .indexed), mountPoint: "/mnt")
                var ino = InodeTable.rootInode
                for part in "iCloud.local.ckfs/public/_defaultZone/Item".split(separator: "/") {
                    ino = try view.lookup(parent: ino, name: String(part), caller: f.me).attributes.inode
                }
                let fh = try view.openDirectory(ino, caller: f.me).handle
                defer { view.releaseDirectory(handle: fh) }
                while case let page = try view.readDirectory(handle: fh, from: names.count, atMost: 1), !page.isEmpty { names += page.map(\.name) }
            } catch let error as FSError { return (names, error) } catch { return (names, FSError(EINVAL, "\(error)")) }
            return (names, nil)
        }
        // The first listing makes the zone's index, so the next one reads names from it.
        #expect(list().0 == ["a.json", "b.json", "c.json"])
        let path = StoreLayout.recordFile((db.zoneStorage(ZoneID.defaultZoneName) as! ZoneFolder).directory, name: "b")
        try Data("{damaged".utf8).write(to: URL(fileURLWithPath: path))
        let (names, failure) = list()
        #expect(names == ["a.json"], "listed up to the unreadable file")
        #expect(failure?.errno == EIO && failure?.reason.contains("b.json") == true, "\(String(describing: failure))")
    }

    @Test func recordFileNamesAreCanonicalOnly() {
        #expect(ItemFileName.record.name("a.json") == "a")
        #expect(ItemFileName.record.name("%2Ea.json") == ".a")
        #expect(ItemFileName.record.make(".a") == "%2Ea.json")
        for scratch in [".a.json", "a.json~", ".a.json.swp", "4913", "sedAb12Cd", ".a.json.Qw3eRt", ".json", "a.JSON", "#a.json#"] {
            #expect(ItemFileName.record.name(scratch) == nil, "\(scratch)")
        }
    }

    @Test func keyValueFileNamesAreCanonicalOnly() {
        #expect(ItemFileName.keyValue.name("theme.plist") == "theme")
        #expect(ItemFileName.keyValue.name("a%2Fb.plist") == "a/b")
        #expect(ItemFileName.keyValue.name("Café.plist") == "Café")
        for scratch in [".theme.plist.swp", "theme.plist~", "theme.json", ".plist", "%2fb.plist", "4913"] {
            #expect(ItemFileName.keyValue.name(scratch) == nil, "\(scratch)")
        }
    }

    @Test func keyValueEntriesTakeTheEditorsPathsAndRefuseWhatBreaksALimit() throws {
        let f = try Fixture()
        let dir = try f.inode("iCloud.local.ckfs/keyvalue")
        let kv = { try KeyValueStore(store: f.store, user: Caller.currentOSUserName, synchronizeEvery: nil) }
        #expect(try kv().value(forKey: "theme") == .string("dark"))
        // vim: rename to the backup name, create anew, write, fsync, close, remove the backup.
        try f.view.rename(parent: dir, name: "theme.plist", newParent: dir, newName: "theme.plist~", flags: 0, caller: f.me)
        #expect(try kv().value(forKey: "theme") == .string("dark"), "renaming away removes nothing")
        #expect(throws: FSError.self) { try f.inode("iCloud.local.ckfs/keyvalue/theme.plist") }
        let (_, reply) = try f.view.create(parent: dir, name: "theme.plist", permissions: 0o600, flags: O_WRONLY | O_CREAT | O_TRUNC, caller: f.me)
        try f.write(reply.handle, "<string>light</string>")
        try f.view.fsync(handle: reply.handle, caller: f.me)
        try f.view.flush(handle: reply.handle, caller: f.me)
        f.view.release(handle: reply.handle)
        try f.view.unlink(parent: dir, name: "theme.plist~", caller: f.me)
        #expect(try kv().value(forKey: "theme") == .string("light"))
        // A key over 64 bytes is refused by name, before any text.
        let long = String(repeating: "k", count: 65) + ".plist"
        #expect(throws: FSError.self) { try f.view.create(parent: dir, name: long, permissions: 0o600, flags: O_WRONLY | O_CREAT, caller: f.me) }
        do { _ = try f.view.lookup(parent: dir, name: long, caller: f.me); Issue.record("expected ENAMETOOLONG") } catch { #expect(error.errno == ENAMETOOLONG) }
        // Text that is no property list fails the flush with EINVAL; the entry stays.
        let ino = try f.inode("iCloud.local.ckfs/keyvalue/theme.plist")
        let fh = try f.view.open(ino, flags: O_WRONLY | O_TRUNC, caller: f.me).handle
        try f.write(fh, "<string>unclosed")
        do { try f.view.flush(handle: fh, caller: f.me); Issue.record("expected EINVAL") } catch { #expect(error.errno == EINVAL) }
        f.view.release(handle: fh)
        #expect(try kv().value(forKey: "theme") == .string("light"))
        // sed -i: a scratch file renamed onto an entry saves it.
        let (_, sed) = try f.view.create(parent: dir, name: "sedX1y2Z3", permissions: 0o600, flags: O_WRONLY | O_CREAT | O_EXCL, caller: f.me)
        try f.write(sed.handle, "<integer>20</integer>")
        try f.view.flush(handle: sed.handle, caller: f.me)
        f.view.release(handle: sed.handle)
        try f.view.rename(parent: dir, name: "sedX1y2Z3", newParent: dir, newName: "fontSize.plist", flags: 0, caller: f.me)
        #expect(try kv().value(forKey: "fontSize") == .integer(20))
    }

    /// An entry's file text is always the current store's: a text rendered from a value that a
    /// save replaced meanwhile is not kept, and two adoptions at once leave the texts of the
    /// store the view holds. Each round saves a new value through the view while another
    /// thread reads the entry's text, then reads it once more with no one writing.
    @Test func aKeyValueTextIsNeverOlderThanTheStore() async throws {
        let f = try Fixture()
        let ref = KeyValueRef(container: "iCloud.local.ckfs", user: Caller.currentOSUserName)
        var stale: [Int] = []
        for round in 0..<400 {
            let text = Array("<integer>\(round)</integer>".utf8)
            async let saved: Void = Task.detached { try f.view.saveKeyValue(text, ref, key: "counter") }.value
            async let read = Task.detached { try f.view.keyValueText(ref, "counter") }.value
            _ = try await (saved, read)
            let after = try f.view.keyValueText(ref, "counter")
            if after.map({ String(decoding: $0.text, as: UTF8.self) }).map({ $0.contains("<integer>\(round)</integer>") }) != true { stale.append(round) }
        }
        #expect(stale.isEmpty, "rounds whose text was older than the store: \(stale.prefix(20))")
    }

    @Test func vimsBackupSequenceSavesTheRecord() throws {
        let f = try Fixture()
        let dir = try f.inode(Self.noteDir)
        let original = try f.publicDB.record(for: f.welcomeID)
        // vim: probe 4913, rename the file to its backup, create the file anew, write, fsync,
        // close, remove the backup.
        let (probe, probeFH) = try f.view.create(parent: dir, name: "4913", permissions: 0o644, flags: O_WRONLY | O_CREAT | O_EXCL, caller: f.me)
        f.view.release(handle: probeFH.handle)
        try f.view.unlink(parent: dir, name: "4913", caller: f.me)
        #expect(probe.attributes.kind == .file)
        try f.view.rename(parent: dir, name: "welcome.json", newParent: dir, newName: "welcome.json~", flags: 0, caller: f.me)
        #expect(throws: FSError.self) { try f.inode(Self.noteDir + "/welcome.json") }
        #expect(try f.publicDB.record(for: f.welcomeID) == original, "renaming away deletes nothing")
        let (_, reply) = try f.view.create(parent: dir, name: "welcome.json", permissions: 0o644, flags: O_WRONLY | O_CREAT | O_TRUNC, caller: f.me)
        try f.write(reply.handle, #"{"recordChangeTag": "\#(original.recordChangeTag!)", "fields": {"title": "from vim"}}"#)
        try f.view.fsync(handle: reply.handle, caller: f.me)
        try f.view.flush(handle: reply.handle, caller: f.me)
        f.view.release(handle: reply.handle)
        try f.view.unlink(parent: dir, name: "welcome.json~", caller: f.me)
        let saved = try f.publicDB.record(for: f.welcomeID)
        #expect(saved["title"] == .string("from vim"))
        #expect(saved.fields.count == 1, "the file is the whole record: fields left out are removed")
        #expect(Int(saved.recordChangeTag!)! == Int(original.recordChangeTag!)! + 1, "one save: fsync and close do not save twice")
    }

    @Test func vimWritingUnchangedTextKeepsTheRecord() throws {
        // `:wq` with no edit: rename to the backup, create anew with the same text, remove the
        // backup. The save is a no-op, and the record must not stay hidden and then be deleted
        // with the backup.
        let f = try Fixture()
        let dir = try f.inode(Self.noteDir)
        let original = try f.publicDB.record(for: f.welcomeID)
        let ino = try f.inode(Self.noteDir + "/welcome.json")
        let fh = try f.view.open(ino, flags: O_RDONLY, caller: f.me).handle
        let text = try f.view.read(handle: fh, count: 1 << 20, offset: 0)
        f.view.release(handle: fh)
        try f.view.rename(parent: dir, name: "welcome.json", newParent: dir, newName: "welcome.json~", flags: 0, caller: f.me)
        let (_, reply) = try f.view.create(parent: dir, name: "welcome.json", permissions: 0o644, flags: O_WRONLY | O_CREAT | O_TRUNC, caller: f.me)
        _ = try text.withUnsafeBytes { b in try f.view.write(handle: reply.handle, bytes: b, offset: 0) }
        try f.view.flush(handle: reply.handle, caller: f.me)
        f.view.release(handle: reply.handle)
        try f.view.unlink(parent: dir, name: "welcome.json~", caller: f.me)
        #expect(try f.publicDB.record(for: f.welcomeID) == original)
        #expect(try f.view.lookup(parent: dir, name: "welcome.json", caller: f.me).attributes.kind == .file)
    }

    /// A text whose only change is the record's parent saves it: the edit is not taken for
    /// the unchanged text it resembles.
    @Test func aTextThatOnlyMovesTheRecordSavesIt() throws {
        let f = try Fixture()
        let child = RecordID(recordName: "child", zoneID: f.welcomeID.zoneID)
        _ = try f.publicDB.save(Record(recordType: "Note", recordID: child, fields: ["title": .string("child")]))
        let ino = try f.inode(Self.noteDir + "/child.json")
        let reader = try f.view.open(ino, flags: O_RDONLY, caller: f.me).handle
        let text = String(decoding: try f.view.read(handle: reader, count: 1 << 20, offset: 0), as: UTF8.self)
        f.view.release(handle: reader)
        #expect(!text.contains("\"parent\""))
        var object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        object["parent"] = ["recordName": "welcome"]
        let moved = try JSONSerialization.data(withJSONObject: object)
        let fh = try f.view.open(ino, flags: O_WRONLY | O_TRUNC, caller: f.me).handle
        _ = try moved.withUnsafeBytes { b in try f.view.write(handle: fh, bytes: b, offset: 0) }
        try f.view.flush(handle: fh, caller: f.me)
        f.view.release(handle: fh)
        #expect(try f.publicDB.record(for: child).parent == "welcome", "the move was saved")
    }

    /// A field written without its type takes the schema's, as `ckfs record save` and
    /// `records/modify` do (one path, `Database.recordToSave`): a base64 text for a BYTES field
    /// is bytes, not a string.
    @Test func aFieldWithoutItsTypeTakesTheSchemasType() throws {
        let f = try Fixture()
        let typed = RecordID(recordName: "typed", zoneID: f.welcomeID.zoneID)
        _ = try f.publicDB.save(Record(recordType: "Note", recordID: typed, fields: ["title": .string("t"), "data": .bytes(Data([1]))]))
        let ino = try f.inode(Self.noteDir + "/welcome.json")
        let reader = try f.view.open(ino, flags: O_RDONLY, caller: f.me).handle
        let text = try f.view.read(handle: reader, count: 1 << 20, offset: 0)
        f.view.release(handle: reader)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(text)) as? [String: Any])
        var fields = try #require(object["fields"] as? [String: Any])
        fields["data"] = ["value": "aGVsbG8="]
        object["fields"] = fields
        let edited = try JSONSerialization.data(withJSONObject: object)
        let fh = try f.view.open(ino, flags: O_WRONLY | O_TRUNC, caller: f.me).handle
        _ = try edited.withUnsafeBytes { b in try f.view.write(handle: fh, bytes: b, offset: 0) }
        try f.view.flush(handle: fh, caller: f.me)
        f.view.release(handle: fh)
        #expect(try f.publicDB.record(for: f.welcomeID)["data"] == .bytes(Data("hello".utf8)))
    }

    @Test func unchangedTextSavesNothingAndAStaleTagFails() throws {
        let f = try Fixture()
        let ino = try f.inode(Self.noteDir + "/welcome.json")
        let before = try f.publicDB.record(for: f.welcomeID)
        let open = try f.view.open(ino, flags: O_RDWR, caller: f.me)
        let text = try f.view.read(handle: open.handle, count: 1 << 20, offset: 0)
        try text.withUnsafeBytes { b in _ = try f.view.write(handle: open.handle, bytes: b, offset: 0) }
        try f.view.flush(handle: open.handle, caller: f.me)
        f.view.release(handle: open.handle)
        #expect(try f.publicDB.record(for: f.welcomeID).recordChangeTag == before.recordChangeTag)

        _ = try f.publicDB.modify(saving: [before.replacingFields(["title": .string("newer")])])
        let stale = try f.view.open(ino, flags: O_WRONLY | O_TRUNC, caller: f.me)
        try f.write(stale.handle, #"{"recordChangeTag": "\#(before.recordChangeTag!)", "fields": {"title": "old"}}"#)
        #expect { try f.view.flush(handle: stale.handle, caller: f.me) } throws: { ($0 as? FSError)?.errno == ESTALE }
        f.view.release(handle: stale.handle)
        #expect(try f.publicDB.record(for: f.welcomeID)["title"] == .string("newer"))
    }

    @Test func lookupCountsBindAndReleaseInodes() throws {
        let f = try Fixture()
        let a = try f.inode(Self.noteDir + "/welcome.json")
        let b = try f.inode(Self.noteDir + "/welcome.json")
        #expect(a == b, "one node, one number")
        f.view.forget(a, count: 1)
        #expect(f.view.inodes.key(of: a) != nil, "still held once")
        f.view.forget(a, count: 1)
        #expect(f.view.inodes.key(of: a) == nil, "unbound when the kernel holds it no more")
        // A listing handed out before a forget binds its number again when replied.
        let dir = try f.inode(Self.noteDir)
        let fh = try f.view.openDirectory(dir, caller: f.me).handle
        let entries = try f.view.readDirectory(handle: fh, from: 0, atMost: 100)
        let entry = try #require(entries.first { $0.name == "welcome.json" })
        f.view.forget(entry.attributes.inode, count: 1)
        f.view.noteLookup(entry)
        #expect(try f.view.attributes(of: entry.attributes.inode, caller: f.me).size > 0)
        f.view.releaseDirectory(handle: fh)
    }

    @Test func badNamesAndOversizedWritesAreRefused() throws {
        let f = try Fixture()
        let dir = try f.inode(Self.noteDir)
        #expect { try f.view.lookup(parent: dir, name: "..", caller: f.me) } throws: { ($0 as? FSError)?.errno == EINVAL }
        #expect { try f.view.lookup(parent: dir, name: String(repeating: "x", count: 256), caller: f.me) } throws: { ($0 as? FSError)?.errno == ENAMETOOLONG }
        #expect { try f.view.create(parent: dir, name: "_system.json", permissions: 0o644, flags: O_WRONLY | O_CREAT, caller: f.me) } throws: { ($0 as? FSError)?.errno == EINVAL }
        let ino = try f.inode(Self.noteDir + "/welcome.json")
        let open = try f.view.open(ino, flags: O_WRONLY, caller: f.me)
        let big = [UInt8](repeating: 0x20, count: f.view.maxFileBytes + 1)
        #expect { try big.withUnsafeBytes { b in _ = try f.view.write(handle: open.handle, bytes: b, offset: 0) } } throws: { ($0 as? FSError)?.errno == EFBIG }
        let fits = [UInt8](repeating: 0x20, count: f.view.maxFileBytes)
        #expect(try fits.withUnsafeBytes { b in try f.view.write(handle: open.handle, bytes: b, offset: 0) } == fits.count)
        f.view.release(handle: open.handle)
    }
}
