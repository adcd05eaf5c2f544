import Foundation
import Testing
import TestSupport
@testable import CloudStore
import CloudKit

/// `<container>/keyvalue/<key>.plist` on a real mount: Python's
/// plistlib, editors and shell tools read and write the entries; every limit answers its
/// errno at and one past its boundary, changes nothing and keeps the text in lost+found.
/// (`KeyValueMountMemoryTests` holds the rejected writes that must not grow the daemon.)
@Suite(.serialized) struct KeyValueMountTests {
    static let folder = "M/\(MountFixture.container)/keyvalue"

    func client(_ m: MountFixture) throws -> KeyValueStore {
        try KeyValueStore(store: Store.open(at: m.store), user: MountFixture.user, synchronizeEvery: nil)
    }

    func storeFile(_ m: MountFixture) throws -> String {
        try keyValueFilePath(Store.open(at: m.store).container(), user: MountFixture.user)
    }

    /// A Python helper that writes bytes to a file in the mount and prints `ok` or the errno's name.
    static let put = """
    import errno, sys
    def put(path, data):
        try:
            with open(path, 'wb') as f:
                f.write(data)
        except OSError as e:
            return errno.errorcode[e.errno]
        return 'ok'

    """

    @Test func pythonReadsAndWritesEntriesWithTheirTypes() throws {
        let m = try MountFixture()
        // The demo's entries, as plistlib reads them through the mount and from the store's file.
        let read = m.sh("""
        cd \(Self.folder) && python3 -c '
        import plistlib, os
        for name in sorted(os.listdir(".")):
            print(name, repr(plistlib.load(open(name, "rb"))))
        whole = plistlib.load(open("\(try storeFile(m))", "rb"))
        print(sorted(whole), whole["fontSize"])
        '
        """)
        #expect(read.status == 0, "\(read.stderr)")
        let lines = read.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("fontSize.plist 14"))
        #expect(lines.contains("theme.plist 'dark'"))
        #expect(lines.contains("recent.plist ['welcome', 'groceries']"))
        #expect(lines.contains { $0.hasPrefix("lastOpened.plist datetime.datetime(") })
        #expect(lines.last == "['fontSize', 'lastOpened', 'recent', 'theme'] 14")

        // plistlib writes values of every type through the mount; the API reads them back typed.
        let write = m.sh("""
        cd \(Self.folder) && python3 -c '
        import plistlib, datetime
        def w(name, v):
            with open(name + ".plist", "wb") as f:
                f.write(plistlib.dumps(v))
        w("when", datetime.datetime(2026, 11, 22, 9, 30, 15))
        w("blob", b"\\x00\\x01\\xfe")
        w("prefs", {"volume": 0.75, "muted": False, "order": [3, 1, 2]})
        w("matrix", [[1, 2], [3, [4, "five"]], []])
        w("name with space", "Mei Chen")
        '
        """)
        #expect(write.status == 0, "\(write.stderr)")
        let kv = try client(m)
        #expect(kv.value(forKey: "when") == .date(Date(timeIntervalSince1970: 1_795_339_815)))
        #expect(kv.value(forKey: "blob") == .data([0, 1, 0xFE]))
        #expect(kv.value(forKey: "prefs") == .dictionary(["volume": .real(0.75), "muted": .bool(false),
                                                          "order": .array([.integer(3), .integer(1), .integer(2)])]))
        #expect(kv.value(forKey: "matrix") == .array([.array([.integer(1), .integer(2)]),
                                                      .array([.integer(3), .array([.integer(4), .string("five")])]), .array([])]))
        #expect(kv.string(forKey: "name with space") == "Mei Chen")
        // A key that is no portable file name shows percent-encoded.
        try kv.setValue(.string("slashed"), forKey: "a/b")
        try kv.setValue(.string("dotted"), forKey: ".hidden")
        try kv.sync()
        let names = m.sh("ls \(Self.folder)").stdout.split(separator: "\n").map(String.init)
        #expect(names.contains("a%2Fb.plist") && names.contains("%2Ehidden.plist"), "\(names)")
        #expect(m.read(m.mount + "/\(MountFixture.container)/keyvalue/a%2Fb.plist")?.contains("<string>slashed</string>") == true)
    }

    @Test func editorsAndShellToolsSaveAndRemoveEntries() throws {
        let m = try MountFixture()
        let f = Self.folder
        let vim = m.sh("vim -Nu NONE -i NONE -es -c '%s/dark/light/' -c wq \(f)/theme.plist")
        #expect(vim.status == 0, "\(vim.stderr)")
        #expect(try client(m).string(forKey: "theme") == "light")
        #expect(m.sh("sed -i 's/<integer>14</<integer>16</' \(f)/fontSize.plist").status == 0)
        #expect(try client(m).longLong(forKey: "fontSize") == 16)
        #expect(m.sh("printf '<string>new</string>' > \(f)/fresh.plist").status == 0)
        #expect(try client(m).string(forKey: "fresh") == "new")
        #expect(m.sh("cp \(f)/theme.plist \(f)/theme-copy.plist && mv \(f)/fresh.plist \(f)/renamed.plist && rm \(f)/recent.plist").status == 0)
        let kv = try client(m)
        #expect(kv.string(forKey: "theme-copy") == "light")
        #expect(kv.string(forKey: "renamed") == "new" && kv.value(forKey: "fresh") == nil)
        #expect(kv.value(forKey: "recent") == nil)
        #expect(m.sh("ls -A \(f)").stdout == "fontSize.plist\nlastOpened.plist\nrenamed.plist\ntheme-copy.plist\ntheme.plist\n", "no swap, backup or temp file left")
        // A change made elsewhere shows at once.
        #expect(m.sh("cat \(f)/theme.plist > /dev/null").status == 0)
        #expect(m.cli(["kv", "set", "theme", "solarized"]).status == 0)
        #expect(m.sh("cat \(f)/theme.plist").stdout.contains("<string>solarized</string>"))
        // tar of the folder restores into the store as it was.
        #expect(m.sh("tar cf kv.tar -C M/\(MountFixture.container) keyvalue && rm M/\(MountFixture.container)/keyvalue/*.plist").status == 0)
        #expect(try client(m).entries.isEmpty)
        let untar = m.sh("tar xf kv.tar -C M/\(MountFixture.container)")
        #expect(untar.status == 0, "\(untar.stderr)")
        #expect(try client(m).entries.count == 5)
        #expect(try client(m).string(forKey: "theme") == "solarized")
    }

    @Test func anEditThroughTheMountReachesAnAPIClientByItself() throws {
        let m = try MountFixture()
        let kv = try KeyValueStore(store: Store.open(at: m.store), user: MountFixture.user, synchronizeEvery: 0.2)
        let heard = LockedList<[String]>()
        let token = NotificationCenter.default.addObserver(forName: KeyValueStore.didChangeExternallyNotification, object: kv, queue: nil) { note in
            if note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int == NSUbiquitousKeyValueStoreServerChange {
                heard.append(note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? [])
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        #expect(m.sh("sed -i 's/dark/light/' \(Self.folder)/theme.plist && rm \(Self.folder)/recent.plist").status == 0)
        let deadline = Date().addingTimeInterval(30)
        while Set(heard.items.joined()) != ["theme", "recent"] && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(Set(heard.items.joined()) == ["theme", "recent"], "\(heard.items)")
        #expect(kv.string(forKey: "theme") == "light" && kv.array(forKey: "recent") == nil)
    }

    @Test func everyLimitAnswersItsErrnoAndKeepsTheText() throws {
        let m = try MountFixture(demo: false)
        let dir = m.mount + "/\(MountFixture.container)/keyvalue"
        let file = try storeFile(m)
        let limits = StoreSettings().keyValueLimits
        let overhead = "<string></string>".utf8.count
        /// Writes `data` (Python bytes syntax) to `name` in the folder and returns `ok` or the errno name.
        func put(_ name: String, _ data: String) -> String {
            let r = m.sh("python3 -c \(Self.shellQuoted(Self.put + "print(put(\(Self.pythonString(dir + "/" + name)), \(data)))"))")
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + r.stderr
        }
        func value(_ text: String) -> String { "b'<string>\(text)</string>'" }
        func stringOf(_ n: Int, _ c: Character = "x") -> String { "b'<string>' + b'\(c)' * \(n) + b'</string>'" }

        // Key length: 64 bytes of UTF-8 at most, in ASCII and in two-byte characters.
        #expect(put(String(repeating: "k", count: limits.maxKeyBytes) + ".plist", value("ok")) == "ok")
        #expect(put(String(repeating: "é", count: limits.maxKeyBytes / 2) + ".plist", value("ok")) == "ok")
        var before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(put(String(repeating: "k", count: limits.maxKeyBytes + 1) + ".plist", value("no")) == "ENAMETOOLONG")
        #expect(put(String(repeating: "é", count: limits.maxKeyBytes / 2) + "e.plist", value("no")) == "ENAMETOOLONG")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(try client(m).entries.count == 2)
        #expect(m.sh("rm M/\(MountFixture.container)/keyvalue/*.plist").status == 0)

        // One value: 1 MB as compact XML at most (a full store is also at its total).
        #expect(put("big.plist", stringOf(limits.maxValueBytes - overhead)) == "ok")
        #expect(try client(m).value(forKey: "big") == .string(String(repeating: "x", count: limits.maxValueBytes - overhead)))
        before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(put("big.plist", stringOf(limits.maxValueBytes - overhead + 1, "y")) == "EFBIG")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        let lost = m.sh("ls M/lost+found").stdout
        #expect(lost.contains("big-") && lost.contains(".plist"), "\(lost)")
        #expect(m.sh("grep -l 'limitExceeded' M/lost+found/big-*.txt").status == 0)
        #expect(m.sh("grep -c yyyyyyyy M/lost+found/big-*.plist").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "the refused text is kept")

        // All values together: 1 MB at most.
        #expect(put("more.plist", value("x")) == "EDQUOT")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(m.sh("rm M/\(MountFixture.container)/keyvalue/big.plist").status == 0)
        let half = limits.maxTotalBytes / 2 - overhead
        #expect(put("a.plist", stringOf(half, "a")) == "ok")
        #expect(put("b.plist", stringOf(half, "b")) == "ok")
        before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(put("b.plist", stringOf(half + 1, "b")) == "EDQUOT")
        #expect(try client(m).value(forKey: "b") == .string(String(repeating: "b", count: half)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(m.sh("rm M/\(MountFixture.container)/keyvalue/a.plist M/\(MountFixture.container)/keyvalue/b.plist").status == 0)

        // Keys: 1024 at most.
        let filler = try client(m)
        for i in 0..<(limits.maxKeys - 1) { try filler.setValue(.integer(Int64(i)), forKey: "k\(i)") }
        try filler.sync()
        #expect(put("last.plist", "b'<true/>'") == "ok")
        before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(put("one-too-many.plist", "b'<true/>'") == "EDQUOT")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(m.sh("ls M/\(MountFixture.container)/keyvalue | wc -l").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1024")

        // Text that is no property list: EINVAL, with the position in the log and the text kept.
        #expect(put("last.plist", "b'<dict><key>a</key></dict>'") == "EINVAL")
        #expect(try client(m).value(forKey: "last") == .bool(true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(m.mountLog.contains("not a valid XML property list at line 1"))
        #expect(m.sh("ls M/lost+found").stdout.contains("last-"))
        // A shell redirect exits 0 (shells ignore close errors), but nothing is lost.
        #expect(m.sh("echo 'not a plist' > M/\(MountFixture.container)/keyvalue/last.plist").status == 0)
        #expect(try client(m).value(forKey: "last") == .bool(true))
        #expect(m.sh("cat M/lost+found/last-*.plist").stdout.contains("not a plist"))
    }

    static func shellQuoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    static func pythonString(_ s: String) -> String { "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
}

/// A list several threads append to.
final class LockedList<T>: @unchecked Sendable {
    /// Guards `storage`.
    private let lock = NSLock()
    private var storage: [T] = []
    func append(_ item: T) { lock.withLock { storage.append(item) } }
    var items: [T] { lock.withLock { storage } }
}
