import Foundation
import Synchronization
import Testing
import TestSupport

/// Close-to-open through a real mount with readers and writers at once: a read after a save
/// closed sees that save whole, a reader never sees a writer's unsaved or half-written text,
/// and a save based on a stale read is refused whatever its text.
@Suite(.serialized) struct ReadYourWritesTests {
    /// A private record `Counter/counter.json` with `{"n": 0}`, in a mount on tmpfs when there is
    /// one (a save there takes no disk time, so reads and saves interleave most).
    private func counterMount() throws -> (MountFixture, String) {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/ckfs-mount-tests" : MountFixture.base
        let m = try MountFixture(demo: false, base: base)
        let folder = m.mount + "/\(MountFixture.container)/private/_defaultZone/Counter"
        let r = m.sh("mkdir '\(folder)' && echo '{\"fields\":{\"n\":0}}' > '\(folder)/counter.json'")
        #expect(r.status == 0, "\(r.stderr)")
        return (m, folder + "/counter.json")
    }

    /// Runs a python3 script with `args`; its last line of output, split on spaces.
    private func python(_ m: MountFixture, _ script: String, _ args: [String]) -> [String] {
        let r = CLIFixture.exec("/usr/bin/env", ["python3", "-c", script] + args)
        #expect(r.status == 0, "\(r.stderr.suffix(1500))")
        return r.stdout.split(separator: "\n").last.map { $0.split(separator: " ").map(String.init) } ?? []
    }

    /// Reads the file in a loop until the file `stop` exists; prints reads and unparseable reads.
    private static let reader = """
    import json, os, sys
    f, stop = sys.argv[1], sys.argv[2]
    reads = torn = 0
    while not os.path.exists(stop):
        with open(f) as r: t = r.read()
        reads += 1
        try: json.loads(t)
        except ValueError: torn += 1
    print(reads, torn)
    """

    @Test func inPlaceSavesAreReadBackWholeWhileAnotherProcessReads() throws {
        let (m, file) = try counterMount()
        let stop = m.root + "/stop"
        let reader = try Spawned("/usr/bin/env", ["python3", "-c", Self.reader, file, stop], stderr: .inherit)
        // Each save opens with O_TRUNC, writes and closes; the read after it must show it.
        let writer = python(m, """
        import json, sys
        f, n = sys.argv[1], int(sys.argv[2])
        stale = failed = 0
        for i in range(1, n + 1):
            try:
                with open(f, 'w') as w: w.write(json.dumps({"fields": {"n": i}}))
            except OSError:
                failed += 1
                continue
            with open(f) as r: t = r.read()
            try: got = json.loads(t)["fields"]["n"]["value"]
            except ValueError: got = None
            if got != i: stale += 1
        print(stale, failed)
        """, [file, "600"])
        #expect(FileManager.default.createFile(atPath: stop, contents: nil))
        reader.wait()
        let readerOut = reader.outputToEnd
            .split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(writer == ["0", "0"], "stale read-backs and failed saves: \(writer)")
        #expect(readerOut.count == 2 && Int(readerOut[0]) ?? 0 > 0, "\(readerOut)")
        #expect(readerOut.last == "0", "torn reads by the other process: \(readerOut)")
    }

    /// Two processes each add 1 to a counter in place, from what they read, 150 times.
    @Test func twoInPlaceWritersLoseNoIncrement() throws {
        let (m, file) = try counterMount()
        let script = """
        import json, sys
        f, n = sys.argv[1], int(sys.argv[2])
        acked = refused = torn = 0
        while acked < n:
            try:
                with open(f) as r: rec = json.loads(r.read())
            except ValueError:
                torn += 1
                continue
            rec["fields"]["n"]["value"] += 1
            try:
                with open(f, 'w') as w: w.write(json.dumps(rec))
                acked += 1
            except OSError:
                refused += 1
        print(acked, refused, torn)
        """
        let results = try runTogether(2) { _ in python(m, script, [file, "150"]) }
        for r in results { #expect(r.count == 3 && r[0] == "150" && r[2] == "0", "acked, refused, torn: \(r)") }
        let stored = try #require(m.read(file))
        let n = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
        #expect(((n["fields"] as? [String: Any])?["n"] as? [String: Any])?["value"] as? Int == 300, "\(stored)")
    }

    /// An open whose version the kernel's pages already hold reads no text from the store;
    /// when the kernel drops those pages while the file is open (`POSIX_FADV_DONTNEED` here,
    /// memory pressure in life), its reads still get the whole text, and a record deleted
    /// meanwhile is an error (ENOENT from the kernel's look at its attributes, or ESTALE from
    /// the daemon), never a short or empty read.
    @Test func aReaderWhosePagesAreDroppedReadsTheTextFromTheStore() throws {
        let (m, file) = try counterMount()
        let script = """
        import errno, json, os, subprocess, sys
        f, ckfs, store, user = sys.argv[1:5]
        def whole(fd):
            out = b''
            while True:
                piece = os.read(fd, 7)
                if not piece: return out
                out += piece
        with open(f, 'rb') as r: first = r.read()
        with open(f, 'rb') as r: assert r.read() == first
        fd = os.open(f, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        again = whole(fd)
        os.close(fd)
        assert again == first, (again, first)
        assert json.loads(again)['fields']['n']['value'] == 0, again
        fd = os.open(f, os.O_RDONLY)
        subprocess.run([ckfs, 'record', 'delete', 'counter', '--store', store, '--user', user], check=True)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        try:
            print('read', len(whole(fd)))
        except OSError as e:
            print(errno.errorcode[e.errno])
        """
        let deleted = python(m, script, [file, CLIFixture.binary, m.store, MountFixture.user])
        #expect(deleted == ["ENOENT"] || deleted == ["ESTALE"], "\(deleted)")
    }

    /// Text with no `recordChangeTag` replaces the record whatever its version, also while
    /// another process keeps saving it.
    @Test func textWithoutAVersionAlwaysOverwrites() throws {
        let (m, file) = try counterMount()
        let script = """
        import json, sys
        f, me = sys.argv[1], int(sys.argv[2])
        refused = 0
        for i in range(150):
            try:
                with open(f, 'w') as w: w.write(json.dumps({"fields": {"n": me * 1000 + i}}))
            except OSError:
                refused += 1
        print(refused)
        """
        let results = try runTogether(2) { i in python(m, script, [file, "\(i + 1)"]) }
        for r in results { #expect(r == ["0"], "refused saves: \(r)") }
    }

    /// A shared writable mapping would change the file without a save anyone hears of: it is
    /// refused at mmap. Read-only mappings work.
    @Test func sharedWritableMappingsAreRefused() throws {
        let (m, file) = try counterMount()
        let r = python(m, """
        import errno, mmap, os, sys
        f = sys.argv[1]
        fd = os.open(f, os.O_RDWR)
        try:
            mmap.mmap(fd, 0)
            rw = "mapped"
        except OSError as e:
            rw = errno.errorcode[e.errno]
        os.close(fd)
        fd = os.open(f, os.O_RDONLY)
        mm = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
        ro = "read" if mm[:1] == b"{" and mm[-2:] == b"}\\n" else "wrong"
        print(rw, ro)
        """, [file])
        #expect(r == ["ENODEV", "read"], "\(r)")
    }
}

/// Runs `body` on `count` threads at once; their results in order.
func runTogether<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) throws -> [T] {
    let results = Mutex<[Int: T]>([:])
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        Thread.detachNewThread {
            let r = body(i)
            results.withLock { $0[i] = r }
            group.leave()
        }
    }
    group.wait()
    return results.withLock { d in (0..<count).map { d[$0]! } }
}
