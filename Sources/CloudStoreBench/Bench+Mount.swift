import CloudStore
import Foundation

// Rows 5 and 7: the FUSE view against the same bytes as plain files, and peak memory. They
// run the ckfs executable (mount, fetch) and ordinary tools as child processes.
extension Bench {
    /// A store with `count` records in its default zone, and the mount of it.
    struct MountedStore {
        let root: String
        let mountPoint: String
        let daemon: Posix.pid_t
        /// The folder of the records through the mount.
        let folder: String
        let store: Store
    }

    func mounted(_ name: String, records count: Int, executable: String) throws(CKError) -> MountedStore {
        let root = directory + "/" + name
        let db = try store(name)
        try fillOnly(db, count: count)
        db.store.waitForRecordFiles()
        return try mount(root, at: directory + "/" + name + "-mount", store: db, executable: executable)
    }

    /// Mounts the store at `root` (`--read-only` added to `arguments` for rows 5f and 5g).
    func mount(_ root: String, at mountPoint: String, store db: Database, arguments: [String] = [], executable: String) throws(CKError) -> MountedStore {
        try makeDirectory(mountPoint)
        let out = try ChildProcess.run(executable, ["mount", mountPoint, "--store", root, "--user", Self.user] + arguments, stdoutFile: directory + "/mount.out")
        guard out.status == 0, let range = out.stdout.range(of: #"daemon pid \d+"#, options: .regularExpression),
              let pid = Posix.pid_t(out.stdout[range].split(separator: " ").last ?? "") else {
            throw CKError(.internalError, "`ckfs mount` of \(root) failed (\(out.status)): \(out.stdout); is fuse3 installed and /dev/fuse there?")
        }
        let folder = mountPoint + "/" + db.container.identifier + "/private/" + ZoneID.defaultZoneName + "/Item"
        return MountedStore(root: root, mountPoint: mountPoint, daemon: pid, folder: folder, store: db.store)
    }

    func unmount(_ m: MountedStore, executable: String) {
        _ = try? ChildProcess.run(executable, ["unmount", m.mountPoint], stdoutFile: "/dev/null")
    }

    /// Row 5: `cat`, `ls -l` and `tar c` of a folder through the mount and of a plain copy of
    /// the same bytes; `sed -i` of one record, p50 and p99.
    func mountRows(executable: String) throws(CKError) -> [Row] {
        let n = sizes.mountRecords
        let m = try mounted("mount", records: n, executable: executable)
        defer { unmount(m, executable: executable) }
        // The native side: the same canonical JSON, as plain files on the same file system.
        let native = directory + "/native/Item"
        try makeDirectory(native)
        let db = try m.store.container().database(.private, caller: Self.caller)
        for r in try db.allRecords() {
            let path = native + "/" + r.recordID.recordName + ".json"
            guard FileManager.default.createFile(atPath: path, contents: Data(RecordCoding.fileBytes(r))) else {
                throw CKError(.internalError, "cannot write \(path)")
            }
        }
        let sink = directory + "/sink"
        // Warm, median of three: both sides read from memory after a first pass, and start
        // after a `sync()`, so the writeback of the files just made does not share the clock.
        func median(_ script: (String) -> String, in dir: String) throws(CKError) -> Double {
            sync()
            _ = try ChildProcess.shell(script(dir), stdoutFile: sink)
            var s: [Double] = []
            for _ in 0..<3 { s.append(try ChildProcess.shell(script(dir), stdoutFile: sink).seconds) }
            return Self.median(s) / Double(n) * 1e6
        }
        let cat = { (d: String) in "cd '\(d)' && cat -- *.json > /dev/null" }
        let ls = { (d: String) in "ls -l '\(d)' > /dev/null" }
        // tar skips reading files when it writes to /dev/null itself; a pipe makes it read.
        let tar = { (d: String) in "tar cf - -C '\(d)' . | cat > /dev/null" }
        var rows: [Row] = []
        for (id, what, script) in [("5a", "cat of every record", cat), ("5b", "ls -l of the folder", ls), ("5c", "tar c of the folder", tar)] {
            let ours = try median(script, in: m.folder)
            let theirs = try median(script, in: native)
            progress(String(format: "%@: mount %.1f µs/file, native %.1f µs/file", what, ours, theirs))
            rows.append(Row(id: id, name: "\(what) (\(n) records), through the mount", unit: "µs/file", ckfs: ours,
                            baselineName: "the same bytes as plain files", baseline: theirs))
        }
        // sed -i: a save through the mount (temp file, rename over the record) per edit.
        func edits(_ dir: String) throws(CKError) -> [Double] {
            var s: [Double] = []
            for i in 0..<sizes.edits {
                let from = i % 2 == 0 ? "a title" : "A title"
                let to = i % 2 == 0 ? "A title" : "a title"
                s.append(try ChildProcess.shell("sed -i 's/\(from)/\(to)/' '\(dir)/item-7.json'", stdoutFile: sink).seconds * 1e6)
            }
            return s.sorted()
        }
        let ours = try edits(m.folder)
        let theirs = try edits(native)
        guard case .string(let title)? = try db.record(for: RecordID(recordName: "item-7", zoneID: db.zoneID(ZoneID.defaultZoneName)))["title"],
              title.contains(sizes.edits % 2 == 0 ? "a title" : "A title") else {
            throw CKError(.internalError, "the sed -i edits through the mount did not all reach the store")
        }
        func pct(_ s: [Double], _ p: Int) -> Double { s[min(s.count - 1, s.count * p / 100)] }
        rows.append(Row(id: "5d", name: "sed -i of one record, p50 (\(sizes.edits) edits)", unit: "µs/edit", ckfs: pct(ours, 50),
                        baselineName: "sed -i of a plain file", baseline: pct(theirs, 50)))
        rows.append(Row(id: "5e", name: "sed -i of one record, p99 (\(sizes.edits) edits)", unit: "µs/edit", ckfs: pct(ours, 99),
                        baselineName: "sed -i of a plain file", baseline: pct(theirs, 99)))
        // The same store mounted read-only beside it: the kernel opens files itself there.
        let ro = try mount(m.root, at: directory + "/mount-ro", store: db, arguments: ["--read-only"], executable: executable)
        defer { unmount(ro, executable: executable) }
        for (id, what, script) in [("5f", "cat of every record", cat), ("5g", "tar c of the folder", tar)] {
            let ours = try median(script, in: ro.folder)
            let theirs = try median(script, in: native)
            progress(String(format: "%@, read-only mount: %.1f µs/file, native %.1f µs/file", what, ours, theirs))
            rows.append(Row(id: id, name: "\(what) (\(n) records), read-only mount", unit: "µs/file", ckfs: ours,
                            baselineName: "the same bytes as plain files", baseline: theirs))
        }
        return rows
    }

    /// Row 7: peak memory of the mount daemon after `ls -l` and `cat` of a whole zone, and of
    /// a CLI fetch of one record from it, against the size of the zone's record files.
    func memoryRows(executable: String) throws(CKError) -> [Row] {
        let n = sizes.fetchZone
        let m = try mounted("memory", records: n, executable: executable)
        defer { unmount(m, executable: executable) }
        let sink = directory + "/sink"
        _ = try ChildProcess.shell("ls -l '\(m.folder)' > /dev/null && cd '\(m.folder)' && find . -name '*.json' -print0 | xargs -0 cat > /dev/null", stdoutFile: sink)
        guard let daemon = ChildProcess.peakRSS(of: m.daemon) else { throw CKError(.internalError, "cannot read the mount daemon's memory (pid \(m.daemon))") }
        // Through GNU time (see ChildProcess on why not wait4 here).
        let rssFile = directory + "/fetch.rss"
        let fetch = try ChildProcess.run("/usr/bin/time", ["-f", "%M", "-o", rssFile, executable, "record", "fetch", "item-5", "--store", m.root, "--user", Self.user], stdoutFile: sink)
        guard fetch.status == 0, let fetchKiB = Int((try? String(contentsOfFile: rssFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") else {
            throw CKError(.internalError, "`ckfs record fetch` under /usr/bin/time failed with \(fetch.status); is GNU time installed (apt-get install time)?")
        }
        let fetchRSS = fetchKiB * 1024
        let dataKiB = try diskUsageKiB(m.root)
        let mib = 1024.0 * 1024.0
        progress(String(format: "memory: mount daemon %.0f MiB, CLI fetch %.0f MiB, store %.0f MiB", Double(daemon) / mib, Double(fetchRSS) / mib, dataKiB / 1024))
        return [
            Row(id: "7a", name: "peak RSS of the mount daemon, ls -l + cat of \(n) records", unit: "MiB", ckfs: Double(daemon) / mib,
                baselineName: "the store on disk (du)", baseline: dataKiB / 1024),
            Row(id: "7b", name: "peak RSS of `ckfs record fetch` in a zone of \(n)", unit: "MiB", ckfs: Double(fetchRSS) / mib,
                baselineName: "the store on disk (du)", baseline: dataKiB / 1024),
        ]
    }

    /// Row 7c: the memory the mount daemon holds (RssAnon: its peak would not show growth
    /// that stays under an earlier peak) after `ls -l` and `cat` of zone after zone, against
    /// what it held after the first of them, when its bounded caches (parsed records,
    /// rendered text, notes on files, index files open) are full already: what is left to grow
    /// with the zones is what each zone costs the daemon beyond those, and the kernel's inodes
    /// of the records listed.
    func manyZonesRow(executable: String) throws(CKError) -> Row {
        let (zones, each, first) = (sizes.manyZones, sizes.manyZonesRecords, min(sizes.manyZonesBaseline, sizes.manyZones))
        let root = directory + "/zones"
        let db = try store("zones")
        for z in 0..<zones {
            try db.createZone("Z\(z)")
            try fillOnly(db, zone: "Z\(z)", count: each)
        }
        let m = try mount(root, at: directory + "/zones-mount", store: db, executable: executable)
        defer { unmount(m, executable: executable) }
        let sink = directory + "/sink"
        let database = m.mountPoint + "/" + db.container.identifier + "/private/"
        func read(_ range: Range<Int>) throws(CKError) -> Int {
            for z in range {
                let folder = database + "Z\(z)/Item"
                _ = try ChildProcess.shell("ls -l '\(folder)' > /dev/null && cd '\(folder)' && cat -- *.json > /dev/null", stdoutFile: sink)
            }
            guard let held = ChildProcess.anonymousRSS(of: m.daemon) else { throw CKError(.internalError, "cannot read the mount daemon's memory (pid \(m.daemon))") }
            return held
        }
        let atFirst = try read(0..<first)
        let atAll = try read(first..<zones)
        let mib = 1024.0 * 1024.0
        progress(String(format: "many zones: mount daemon %.0f MiB after %d zones, %.0f MiB after %d", Double(atFirst) / mib, first, Double(atAll) / mib, zones))
        return Row(id: "7c", name: "RssAnon of the mount daemon, ls -l + cat of \(zones) zones of \(each) records", unit: "MiB",
                   ckfs: Double(atAll) / mib, baselineName: "the same after the first \(first) zones", baseline: Double(atFirst) / mib)
    }

    func makeDirectory(_ path: String) throws(CKError) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw CKError(.internalError, "cannot make \(path): \(error)")
        }
    }
}
