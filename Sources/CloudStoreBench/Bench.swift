import CloudStore
import Foundation

/// `ckfs bench`: ckfs against what a user would pick instead (SQLite in-process, the native
/// file system, the disk's own fsync), measured in one run on one file system.
///
/// Every row is a cost per operation; `ratio` is baseline ÷ ckfs, so above 1.0 ckfs is better.
public struct Bench: Sendable {
    /// How much work each row does.
    public struct Sizes: Sendable {
        public var singleSaves = 2_000
        public var batchRecords = 20_000
        public var batchSize = 400
        public var fetchZone = 100_000
        public var fetches = 20_000
        public var queryRecords = 100_000
        public var queries = 20
        public var fsyncs = 1_000
        /// Row 5: the folder read through the mount, and the sed -i edits.
        public var mountRecords = 10_000
        public var edits = 50
        /// Row 6: zone sizes, and the work measured at each.
        public var growth = [1_000, 10_000, 100_000]
        public var growthSaves = 200
        public var growthFetches = 5_000
        /// Row 7c: zones read through one mount, their records each, and the zones read when
        /// its baseline is taken: past the daemon's bounds (64 index files open, notes on
        /// 65,536 files), so that what grows after is what grows with zones.
        public var manyZones = 400
        public var manyZonesRecords = 250
        public var manyZonesBaseline = 300
        /// Row 9: records in the served zone, and seconds of load for each measurement.
        public var serverRecords = 10_000
        public var serverSeconds = 5
        /// Row 10: runs of each cold process (the median counts).
        public var coldRuns = 25

        public init() {}

        /// About two minutes on a 2-core machine in a release build.
        public static var quick: Sizes {
            var s = Sizes()
            s.singleSaves = 500
            s.batchRecords = 8_000
            s.fetchZone = 20_000
            s.fetches = 10_000
            s.queryRecords = 20_000
            s.queries = 10
            s.fsyncs = 300
            s.mountRecords = 3_000
            s.manyZones = 80
            s.manyZonesRecords = 50
            s.manyZonesBaseline = 60
            s.edits = 20
            s.growth = [1_000, 10_000]
            s.growthSaves = 100
            s.serverRecords = 2_000
            s.serverSeconds = 2
            s.coldRuns = 5
            return s
        }
    }

    /// One line of the table.
    public struct Row: Sendable {
        public var id: String
        public var name: String
        /// What the figures count: "µs/op" (lower is better) for every row.
        public var unit = "µs/op"
        public var ckfs: Double
        public var baselineName: String
        public var baseline: Double
        /// baseline ÷ ckfs: above 1.0, ckfs is better.
        public var ratio: Double { ckfs > 0 ? baseline / ckfs : 0 }
    }

    public let directory: String
    public let sizes: Sizes
    /// The rows to run (ids as in the table, "8b" comes with "1"); nil runs them all.
    public let only: Set<String>?
    /// The ckfs executable, for the rows that mount (5, 7) and serve (9); nil leaves them out.
    public let executable: String?
    /// Called with each row as it is measured, and with progress lines.
    public let progress: @Sendable (String) -> Void

    /// Every row id, in the order of the table.
    public static let rowIDs = ["8", "1", "8b", "2", "8c", "2b", "6a", "6b", "6c", "6d", "6e", "6f", "3", "4a", "4b", "5a", "5b", "5c", "5d", "5e", "5f", "5g", "7a", "7b", "7c",
                                 "9a", "9b", "9c", "9d", "9e", "9f", "9g", "9h", "9i", "9j", "9k", "9l", "10a", "10b", "10c", "10d", "10e",
                                 "10f", "10g", "10h", "10i", "10j", "10k", "10l", "11a", "11b", "11c", "11d", "11e", "11f"]

    public init(directory: String, sizes: Sizes, only: Set<String>? = nil, executable: String? = nil,
                progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = directory
        self.sizes = sizes
        self.only = only
        self.executable = executable
        self.progress = progress
    }

    /// Runs every row, in a fresh directory it removes after.
    public func run() throws(CKError) -> [Row] {
        try? FileManager.default.removeItem(atPath: directory)
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw CKError(.internalError, "cannot make \(directory): \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func wanted(_ ids: String...) -> Bool { only.map { !$0.isDisjoint(with: ids) } ?? true }
        /// Whether any row of a numbered group (`"9"`: 9a-9l) is wanted.
        func wanted(group: String) -> Bool {
            only.map { !$0.isDisjoint(with: Self.rowIDs.filter { $0.hasPrefix(group) && $0.dropFirst(group.count).allSatisfy(\.isLetter) }) } ?? true
        }
        var rows: [Row] = []
        if wanted("1", "8b", "2", "8c", "2b", "6a", "6b", "6e", "6f") {
            let perFile = try createFiles(in: directory + "/probe", count: 200)
            progress(String(format: "file creation now: %.1f µs a file (200 files)", perFile * 1e6))
            if let warning = Self.fileSystemWarning(secondsPerFile: perFile) { progress(warning) }
        }
        let floor = wanted("8", "8b") ? try fsyncFloor() : nil
        if let floor, wanted("8") { rows.append(floor) }
        if wanted("1", "8b") {
            let single = try singleSaves()
            if wanted("1") { rows.append(single) }
            if let floor, wanted("8b") {
                rows.append(Row(id: "8b", name: "single saves against the fsync floor", ckfs: single.ckfs, baselineName: "one fdatasync", baseline: floor.baseline))
            }
        }
        if wanted("2", "8c", "2b") {
            // The file floor just before the saves, so both meet the file system in one state.
            let files = wanted("8c", "2b") ? try fileFloor() : nil
            let batch = wanted("2", "2b") ? try batchSaves() : nil
            if let batch, wanted("2") { rows.append(batch) }
            if let files, wanted("8c") { rows.append(files) }
            if let files, let batch, wanted("2b") {
                rows.append(Row(id: "2b", name: "saves in batches against the file floor", ckfs: batch.ckfs, baselineName: files.baselineName, baseline: files.baseline))
            }
        }
        if wanted(group: "6") { rows += try growth(withFloor: wanted("6e", "6f")).filter { wanted($0.id) } }
        if wanted("3") { rows.append(try fetchByID()) }
        if wanted("4a", "4b") { rows += try queries().filter { wanted($0.id) } }
        if let executable {
            if wanted(group: "5") { rows += try mountRows(executable: executable).filter { wanted($0.id) } }
            if wanted("7a", "7b") { rows += try memoryRows(executable: executable).filter { wanted($0.id) } }
            if wanted("7c") { rows.append(try manyZonesRow(executable: executable)) }
            if wanted(group: "9") {
                rows += try serverRows(executable: executable).filter { wanted($0.id) }
            }
            if wanted(group: "10") { rows += try coldRows(executable: executable).filter { wanted($0.id) } }
            if wanted(group: "11") { rows += try transferRows(executable: executable).filter { wanted($0.id) } }
        }
        return rows
    }

    // MARK: Workload

    /// Record `i`: five fields, about 300 bytes as JSON, in one of ten kinds.
    public static func record(_ i: Int, zone: ZoneID) -> Record {
        var r = Record(recordType: "Item", recordID: RecordID(recordName: "item-\(i)", zoneID: zone))
        r["title"] = .string("Item number \(i) of the benchmark, a title")
        r["body"] = .string(String(repeating: "lorem ipsum dolor sit amet ", count: 4) + "\(i)")
        r["kind"] = .string("k\(i % 10)")
        r["score"] = .int64(Int64((i * 7_919) % 1_000))
        r["created"] = .timestamp(milliseconds: 1_700_000_000_000 + Int64(i) * 1_000)
        return r
    }

    /// What SQLite stores per row: the record's own JSON, as ckfs writes it.
    static func json(_ r: Record) -> String { String(decoding: RecordCoding.fileBytes(r), as: UTF8.self) }

    /// The OS user, so a mount of a bench store shows the same private database.
    static let caller = Caller.osUser(deviceID: "bench")
    static var user: String { caller.userName }

    func store(_ name: String, reading: ZoneReading = .inMemory) throws(CKError) -> Database {
        let store = try Store.create(at: directory + "/" + name, reading: reading)
        return try store.container().database(.private, caller: Self.caller)
    }

    /// What `path` takes on disk, in KiB (`du -sk`).
    func diskUsageKiB(_ path: String) throws(CKError) -> Double {
        let du = try ChildProcess.shell("du -sk '\(path)'", stdoutFile: directory + "/du.out").stdout
        return Double(du.split(separator: "\t").first.flatMap { Int($0) } ?? 0)
    }

    func sqlite(_ name: String) throws(CKError) -> SQLiteDatabase {
        let db = try SQLiteDatabase(path: directory + "/" + name + ".sqlite")
        try db.execute("CREATE TABLE records (name TEXT PRIMARY KEY, kind TEXT, score INTEGER, created INTEGER, json TEXT)")
        return db
    }

    static func values(_ r: Record) -> [SQLiteDatabase.Value] {
        guard case .string(let kind)? = r["kind"], case .int64(let score)? = r["score"], case .timestamp(let created)? = r["created"] else { return [] }
        return [.text(r.recordID.recordName), .text(kind), .int(score), .int(created.millisecondsSince1970), .text(json(r))]
    }

    static let insert = "INSERT OR REPLACE INTO records (name, kind, score, created, json) VALUES (?, ?, ?, ?, ?)"

    /// Seconds `body` takes, from a quiet disk: `sync()` first, outside the clock, so the
    /// writeback of what came before (a fill, another row's files) is not measured as part of
    /// this row; on this project's machine it made the first growth size 2-8x slower.
    func time(_ body: () throws(CKError) -> Void) throws(CKError) -> Double {
        sync()
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The middle of `samples` (the upper middle of an even count): a run's hiccup moves it
    /// only when it hits most of the samples.
    static func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

    /// Fills a ckfs zone (the default zone unless named) with `count` records from number
    /// `from`, in batches of 400, and waits for the record files, so the rows that read measure
    /// a settled store, not one still writing behind. A batch that saves less fails the fill.
    func fillOnly(_ db: Database, zone name: String = ZoneID.defaultZoneName, from: Int = 0, count: Int) throws(CKError) {
        let zone = db.zoneID(name)
        var i = from
        while i < from + count {
            if let error = try db.modify(saving: (i..<min(i + 400, from + count)).map { Self.record($0, zone: zone) }).error { throw error }
            i += 400
        }
        db.store.waitForRecordFiles()
    }

    /// Fills a ckfs zone and an SQLite table with `count` records, in batches.
    func fill(_ db: Database, _ sql: SQLiteDatabase, count: Int) throws(CKError) {
        try fillOnly(db, count: count)
        let zone = db.zoneID(ZoneID.defaultZoneName)
        let insert = try sql.prepare(Self.insert)
        for start in stride(from: 0, to: count, by: 400) {
            try sql.execute("BEGIN")
            for i in start..<min(start + 400, count) { try insert.run(Self.values(Self.record(i, zone: zone))) }
            try sql.execute("COMMIT")
        }
    }
}
