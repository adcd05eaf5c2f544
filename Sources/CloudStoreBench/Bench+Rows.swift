import CloudStore
import Foundation

// The rows of the table; each measures ckfs and its baseline the same way.
extension Bench {
    /// Row 8: one block written and fdatasync'ed, repeated: the disk's floor for durable saves.
    func fsyncFloor() throws(CKError) -> Row {
        let path = directory + "/fsync-floor"
        let fd = try Syscall.open(path, Posix.O_CREAT | Posix.O_WRONLY | Posix.O_TRUNC).orThrow(.internalError, "cannot open \(path)")
        defer { Syscall.close(fd) }
        let block = [UInt8](repeating: 0x2A, count: 4096)
        var samples: [Double] = []
        for i in 0..<sizes.fsyncs {
            samples.append(try time { () throws(CKError) in
                try Syscall.pwriteAll(fd, block, offset: Int64(4096 * (i % 16)), path: path).orThrow(.internalError, "cannot write")
                try Syscall.fdatasync(fd, path: path).orThrow(.internalError, "cannot sync")
            })
        }
        samples.sort()
        let median = samples[samples.count / 2] * 1e6
        progress(String(format: "fsync floor: median %.0f µs (p99 %.0f µs): at most %.0f durable saves/s", median, samples[samples.count * 99 / 100] * 1e6, 1e6 / median))
        return Row(id: "8", name: "the floor: 4 KiB write + fdatasync", ckfs: median, baselineName: "one fdatasync", baseline: median)
    }

    /// Row 8c: the file system's floor for a file per record: as many files as row 2 saves,
    /// each holding a record's bytes, created, written and closed in one new folder (no temp
    /// file, no rename, no fsync). A design with a file per record pays at least this per
    /// record, and on ext4 without a journal it swings with the deletions of the last minutes
    /// (the inode allocator skips recently freed inodes), so row 2b sets row 2 against it.
    func fileFloor() throws(CKError) -> Row {
        let perFile = try createFiles(in: directory + "/file-floor", count: sizes.batchRecords) * 1e6
        return Row(id: "8c", name: "the file floor: create, write, close (\(sizes.batchRecords) files)", ckfs: perFile,
                   baselineName: "a file created, written, closed", baseline: perFile)
    }

    /// Seconds a file to create, write and close `count` record-sized files in a new folder
    /// (kept: removing them would itself slow the next creations, see ``fileSystemWarning(secondsPerFile:)``).
    func createFiles(in folder: String, count: Int) throws(CKError) -> Double {
        try Syscall.mkdir(folder).orThrow(.internalError, "cannot make the folder")
        return try createFiles(in: folder, from: 0, count: count)
    }

    /// Seconds a file to create, write and close the record files `from..<from + count` in
    /// `folder`, the bytes made before the clock.
    func createFiles(in folder: String, from: Int, count: Int) throws(CKError) -> Double {
        let zone = ZoneID(zoneName: ZoneID.defaultZoneName)
        let files = (from..<(from + count)).map { (folder + "/item-\($0).json", RecordCoding.fileBytes(Self.record($0, zone: zone))) }
        let seconds = try time { () throws(CKError) in for (path, bytes) in files { try Self.writeNewFile(path, bytes) } }
        return seconds / Double(max(1, count))
    }

    /// Fills `folder` (new) with the record files `0..<count`, as ``fillOnly(_:zone:from:count:)``
    /// fills a zone, untimed: the folder the file floor of row 6 adds files to.
    func fillFiles(in folder: String, count: Int) throws(CKError) {
        try Syscall.mkdir(folder).orThrow(.internalError, "cannot make the folder")
        let zone = ZoneID(zoneName: ZoneID.defaultZoneName)
        for i in 0..<count { try Self.writeNewFile(folder + "/item-\(i).json", RecordCoding.fileBytes(Self.record(i, zone: zone))) }
    }

    static func writeNewFile(_ path: String, _ bytes: [UInt8]) throws(CKError) {
        let fd = try Syscall.open(path, Posix.O_CREAT | Posix.O_EXCL | Posix.O_WRONLY).orThrow(.internalError, "cannot create \(path)")
        defer { Syscall.close(fd) }
        try Syscall.writeAll(fd, bytes, path: path).orThrow(.internalError, "cannot write \(path)")
    }

    /// What to say when creating a file is slow before any row runs. On ext4 without a
    /// journal, the inode allocator skips inodes freed in the last minutes, so after a large
    /// deletion (another bench run removing its folder) each creation scans past them, many
    /// times slower than on a rested file system, and every row that writes record files (1, 2,
    /// 2b, 6a, 6b, 6e) then measures the file system's state more than ckfs.
    public static func fileSystemWarning(secondsPerFile: Double) -> String? {
        guard secondsPerFile > 200e-6 else { return nil }
        return String(format: "warning: creating a file takes %.0f µs now (tens of µs on a settled file system): files were probably removed in the last minutes, and ext4 skips their inodes for a while; rows 1, 2, 2b, 6a, 6b and 6e will measure that. Run the bench again some minutes after any large deletion.", secondsPerFile * 1e6)
    }

    /// Row 1: durable single-record saves, one operation each.
    func singleSaves() throws(CKError) -> Row {
        let db = try store("single")
        let sql = try sqlite("single")
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let records = (0..<sizes.singleSaves).map { Self.record($0, zone: zone) }
        let insert = try sql.prepare(Self.insert)
        // Until the last record file is written too: the whole of the work, not just the commits.
        let ours = try time { () throws(CKError) in
            for r in records { try db.save(r) }
            db.store.waitForRecordFiles()
        }
        let theirs = try time { () throws(CKError) in for r in records { try insert.run(Self.values(r)) } }
        let n = Double(records.count)
        return Row(id: "1", name: "durable single saves (\(records.count), one operation each)", ckfs: ours / n * 1e6,
                   baselineName: "SQLite WAL, synchronous=FULL, one transaction each", baseline: theirs / n * 1e6)
    }

    /// Row 2: saves in batches of `batchSize`.
    func batchSaves() throws(CKError) -> Row {
        let db = try store("batch")
        let sql = try sqlite("batch")
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let records = (0..<sizes.batchRecords).map { Self.record($0, zone: zone) }
        let batches = stride(from: 0, to: records.count, by: sizes.batchSize).map { Array(records[$0..<min($0 + sizes.batchSize, records.count)]) }
        let insert = try sql.prepare(Self.insert)
        let ours = try time { () throws(CKError) in
            for b in batches { _ = try db.modify(saving: b) }
            db.store.waitForRecordFiles()
        }
        let theirs = try time { () throws(CKError) in
            for b in batches {
                try sql.execute("BEGIN")
                for r in b { try insert.run(Self.values(r)) }
                try sql.execute("COMMIT")
            }
        }
        let n = Double(records.count)
        return Row(id: "2", name: "saves in batches of \(sizes.batchSize) (\(records.count) records)", ckfs: ours / n * 1e6,
                   baselineName: "SQLite, one transaction per batch", baseline: theirs / n * 1e6)
    }

    /// Row 3: random fetches by ID in a zone of `fetchZone` records, warm; both decode the record.
    func fetchByID() throws(CKError) -> Row {
        let db = try store("fetch")
        let sql = try sqlite("fetch")
        try fill(db, sql, count: sizes.fetchZone)
        progress("filled \(sizes.fetchZone) records for fetches")
        var rng = SplitMix(seed: 7)
        let names = (0..<sizes.fetches).map { _ in "item-\(Int(rng.next() % UInt64(sizes.fetchZone)))" }
        let select = try sql.prepare("SELECT json FROM records WHERE name = ?")
        let zone = db.zoneID(ZoneID.defaultZoneName)
        func ckfsPass() throws(CKError) { for n in names { _ = try db.record(for: RecordID(recordName: n, zoneID: zone)) } }
        func sqlitePass() throws(CKError) {
            for n in names {
                guard let bytes = try select.rows([.text(n)]).first else { throw CKError(.unknownItem, "SQLite lost \(n)") }
                _ = try Self.decode(bytes)
            }
        }
        try ckfsPass()
        try sqlitePass()
        let ours = try time(ckfsPass)
        let theirs = try time(sqlitePass)
        let n = Double(names.count)
        return Row(id: "3", name: "fetch by ID (\(names.count) random, warm, zone of \(sizes.fetchZone))", ckfs: ours / n * 1e6,
                   baselineName: "SQLite primary key, JSON decoded", baseline: theirs / n * 1e6)
    }

    /// Row 4: `kind == %@ AND score > %@`, newest first, 100 records; SQLite without an index and with one.
    func queries() throws(CKError) -> [Row] {
        let db = try store("query")
        let sql = try sqlite("query")
        try fill(db, sql, count: sizes.queryRecords)
        progress("filled \(sizes.queryRecords) records for queries")
        let query = RecordQuery(recordType: "Item",
                                predicate: try QueryPredicate(format: "kind == %@ AND score > %@", .string("k3"), .int(500)),
                                sortDescriptors: [QuerySortDescriptor(key: "created", ascending: false)])
        let select = try sql.prepare("SELECT json FROM records WHERE kind = ? AND score > ? ORDER BY created DESC LIMIT 100")
        func ckfsQuery() throws(CKError) {
            let r = try db.query(query, limit: 100)
            guard r.records.count == 100 else { throw CKError(.internalError, "the query found \(r.records.count) records, not 100") }
        }
        func sqliteQuery() throws(CKError) {
            let rows = try select.rows([.text("k3"), .int(500)])
            guard rows.count == 100 else { throw CKError(.internalError, "SQLite found \(rows.count) records, not 100") }
            for bytes in rows { _ = try Self.decode(bytes) }
        }
        func median(_ body: () throws(CKError) -> Void) throws(CKError) -> Double {
            try body() // warm
            var samples: [Double] = []
            for _ in 0..<sizes.queries { samples.append(try time(body)) }
            return Self.median(samples) * 1e6
        }
        let ours = try median(ckfsQuery)
        let plain = try median(sqliteQuery)
        try sql.execute("CREATE INDEX by_kind_created ON records (kind, created)")
        let indexed = try median(sqliteQuery)
        let name = "query: 2-field predicate, sort, limit 100 (\(sizes.queryRecords) records)"
        return [Row(id: "4a", name: name, ckfs: ours, baselineName: "SQLite, no index", baseline: plain),
                Row(id: "4b", name: name, ckfs: ours, baselineName: "SQLite, index on (kind, created)", baseline: indexed)]
    }

    /// Row 6: rows 1-3 in zones of each size in `sizes.growth` (fetches warm, 6c, and first
    /// ones from another opening, 6d), as the cost per operation
    /// against the same at the smallest size (ratio 1.0: flat). With `withFloor`, the file
    /// floor at each size too: files created in a folder of as many files as the zone holds
    /// (6e, against the smallest size), and the batch against it (6f), so what a batch of new
    /// records costs more in a large zone is set against what the file system costs more.
    func growth(withFloor: Bool) throws(CKError) -> [Row] {
        var first: (save: Double, batch: Double, fetch: Double, cold: Double)?
        var firstFloor: Double?
        var rows: [Row] = []
        for size in sizes.growth {
            let db = try store("growth-\(size)")
            try fillOnly(db, count: size)
            db.store.waitForRecordFiles()
            let floorFolder = withFloor ? directory + "/growth-floor-\(size)" : nil
            if let floorFolder { try fillFiles(in: floorFolder, count: size) }
            let zone = db.zoneID(ZoneID.defaultZoneName)
            var next = size
            func fresh(_ n: Int) -> [Record] {
                defer { next += n }
                return (next..<(next + n)).map { Self.record($0, zone: zone) }
            }
            // The median of five rounds: a round of single saves is short, and one round
            // measures the disk's swing (a writeback, the host) as often as the zone's size.
            // (The zone grows by the rounds' saves, a thousand records: the sizes stay apart.)
            var rounds: [Double] = []
            for _ in 0..<5 {
                let singles = fresh(sizes.growthSaves)
                rounds.append(try time { () throws(CKError) in
                    for r in singles { try db.save(r) }
                    db.store.waitForRecordFiles()
                } / Double(singles.count) * 1e6)
            }
            let save = Self.median(rounds)
            // The file floor at this size, just before the batches, so both meet the file
            // system in one state: as many record-sized files as a batch saves, created in a
            // folder already holding `size` of them, the median of five such.
            let floor = try floorFolder.map { folder throws(CKError) in
                var runs: [Double] = []
                for k in 0..<5 { runs.append(try createFiles(in: folder, from: size + k * 400, count: 400) * 1e6) }
                return Self.median(runs)
            }
            // The median of five batches, each to its last record file: a batch that checkpoints
            // the zone and compacts its log (every 16 MiB of log written, at the same records
            // in every run) costs a few times the others, whatever the zone's size.
            var batches: [Double] = []
            for _ in 0..<5 {
                let batched = fresh(400)
                batches.append(try time { () throws(CKError) in
                    if let error = try db.modify(saving: batched).error { throw error }
                    db.store.waitForRecordFiles()
                } / Double(batched.count) * 1e6)
            }
            let batch = Self.median(batches)
            var rng = SplitMix(seed: 11)
            let ids = (0..<sizes.growthFetches).map { _ in RecordID(recordName: "item-\(Int(rng.next() % UInt64(size)))", zoneID: zone) }
            // Warm, like row 3: every fetched record once before the clock. (Without it the
            // smaller zones were warm by accident, the fill leaving every record in the
            // record cache of 50,000, and the 100,000-record zone half cold.)
            for id in ids { _ = try db.record(for: id) }
            // The median of five passes: one pass is short, and a single one measures a hiccup
            // of the host as often as the zone's size.
            var passes: [Double] = []
            for _ in 0..<5 {
                passes.append(try time { () throws(CKError) in for id in ids { _ = try db.record(for: id) } } / Double(ids.count) * 1e6)
            }
            let fetch = Self.median(passes)
            // Cold: another opening of the store fetching distinct records, each first fetch
            // reading the record's file (from the page cache).
            let other = try Store.open(at: directory + "/growth-\(size)").container().database(.private, caller: Self.caller)
            var names = Array(0..<size)
            for i in names.indices.reversed() { names.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            let coldIDs = names.prefix(sizes.growthFetches).map { RecordID(recordName: "item-\($0)", zoneID: zone) }
            let cold = try time { () throws(CKError) in for id in coldIDs { _ = try other.record(for: id) } } / Double(coldIDs.count) * 1e6
            let base = first ?? (save, batch, fetch, cold)
            first = base
            progress(String(format: "growth at %d records: save %.0f µs, batch %.1f µs/record, fetch %.1f µs warm, %.1f µs cold", size, save, batch, fetch, cold)
                     + (floor.map { String(format: "; file floor %.1f µs/file", $0) } ?? ""))
            let at = "at \(size) records"
            let baseName = "the same at \(sizes.growth[0]) records"
            rows.append(Row(id: "6a", name: "growth: single save \(at)", ckfs: save, baselineName: baseName, baseline: base.save))
            rows.append(Row(id: "6b", name: "growth: batch save per record \(at)", ckfs: batch, baselineName: baseName, baseline: base.batch))
            rows.append(Row(id: "6c", name: "growth: fetch by ID, warm, \(at)", ckfs: fetch, baselineName: baseName, baseline: base.fetch))
            rows.append(Row(id: "6d", name: "growth: first fetch (file read) \(at)", ckfs: cold, baselineName: baseName, baseline: base.cold))
            if let floor {
                let baseFloor = firstFloor ?? floor
                firstFloor = baseFloor
                rows.append(Row(id: "6e", name: "growth: file floor per file, in a folder of \(size) files", ckfs: floor,
                                baselineName: "the same in a folder of \(sizes.growth[0])", baseline: baseFloor))
                rows.append(Row(id: "6f", name: "growth: batch save per record against the file floor \(at)", ckfs: batch,
                                baselineName: "a file created, written, closed", baseline: floor))
            }
        }
        return rows.sorted { $0.id < $1.id }
    }

    static func decode(_ bytes: [UInt8]) throws(CKError) -> Record {
        let json: JSONValue
        do { json = try JSONParser.parse(bytes) } catch { throw CKError(.internalError, "SQLite returned bad JSON: \(error)") }
        return try RecordCoding.decode(json, mode: .stored).record
    }
}

/// A small seeded generator, so every run fetches the same names.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
