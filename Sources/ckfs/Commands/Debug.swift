import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

/// Workloads for the process tests (crash and concurrency); hidden from help.
struct Debug: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Workloads used by the tests.",
        shouldDisplay: false,
        subcommands: [CrashWriter.self, Counter.self, WriteLoop.self, Fill.self, KeyValueClient.self, KeyValueWriter.self, QueryTiming.self]
    )
}

extension Debug {
    /// Saves numbered atomic batches forever, printing `saved N` after each is acknowledged.
    /// Batch N sets field `batch` = N on records fixed-0…fixed-(K-1), creates b-N, and deletes
    /// b-(N-5): after a crash all fixed records must agree and b-records must match.
    struct CrashWriter: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save numbered batches until killed.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "Records updated by every batch.") var fixed = 4
        @Option(help: "Stop after this many batches (0: never).") var batches = 0

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let zone = db.zoneID(options.zone)
                var last: Int64 = 0
                if case .success(let r) = db.fetch([RecordID(recordName: "fixed-0", zoneID: zone)])[0].1,
                   case .int64(let b)? = r["batch"] { last = b }
                var n = last + 1
                while batches == 0 || n <= last + Int64(batches) {
                    var records = (0..<fixed).map { i in
                        Record(recordType: "Crash", recordID: RecordID(recordName: "fixed-\(i)", zoneID: zone), fields: ["batch": .int64(n)])
                    }
                    records.append(Record(recordType: "Crash", recordID: RecordID(recordName: "b-\(n)", zoneID: zone),
                                          fields: ["batch": .int64(n), "note": .string(String(repeating: "x", count: Int(n % 200)))]))
                    let deletes = n > 5 ? [RecordID(recordName: "b-\(n - 5)", zoneID: zone)] : []
                    let result = try db.modify(saving: records, deleting: deletes, options: ModifyOptions(savePolicy: .allKeys))
                    if let error = result.error { throw error }
                    // Unbuffered, so the line is out before the next batch starts.
                    FileHandle.standardOutput.write(Data("saved \(n)\n".utf8))
                    n += 1
                }
            }
        }
    }

    /// Increments a counter record `--times` times with fetch, add one, save under the default
    /// policy, retrying on `serverRecordChanged`. Prints `conflicts N` at the end.
    struct Counter: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Increment a counter record with retries on conflict.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "The counter's record name.") var name = "counter"
        @Option(help: "How many increments.") var times = 100

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let id = RecordID(recordName: name, zoneID: db.zoneID(options.zone))
                var conflicts = 0
                var done = 0
                while done < times {
                    var record: Record
                    switch db.fetch([id])[0].1 {
                    case .success(let r): record = r
                    case .failure(let e) where e.code == .unknownItem:
                        record = Record(recordType: "Counter", recordID: id, fields: ["n": .int64(0)])
                    case .failure(let e): throw e
                    }
                    guard case .int64(let n)? = record["n"] else { throw CKError(.internalError, "counter has no n") }
                    record["n"] = .int64(n + 1)
                    do {
                        try db.save(record)
                        done += 1
                    } catch let e as CKError where e.code == .serverRecordChanged {
                        conflicts += 1
                    }
                }
                print("conflicts \(conflicts)")
            }
        }
    }

    /// Fills a zone with `--count` of the bench's records (`item-<i>`, five fields), in
    /// batches of 400, for profiling a large zone by hand.
    struct Fill: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Fill a zone with numbered records in batches.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "How many records.") var count = 100_000
        @Flag(help: "Save over records that exist (the all-keys policy), to measure updates.") var overwrite = false

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let zone = db.zoneID(options.zone)
                let modifyOptions = ModifyOptions(savePolicy: overwrite ? .allKeys : .ifServerRecordUnchanged)
                let progress = TerminalProgress("saving", total: count)
                for start in stride(from: 0, to: count, by: 400) {
                    let batch = (start..<min(start + 400, count)).map { Bench.record($0, zone: zone) }
                    if let error = try db.modify(saving: batch, options: modifyOptions).error { throw error }
                    progress.update(start + batch.count)
                }
                progress.finish()
                db.store.waitForRecordFiles()
                print("saved \(count)")
            }
        }
    }

    /// Saves `--count` records named `<prefix>-<i>`, one operation each.
    struct WriteLoop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Save many records, one operation each.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "Record name prefix.") var prefix = "w"
        @Option(help: "How many records.") var count = 100

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                for i in 0..<count {
                    try db.save(Record(recordType: "Loop", recordID: RecordID(recordName: "\(prefix)-\(i)", zoneID: db.zoneID(options.zone)),
                                       fields: ["i": .int64(Int64(i)), "prefix": .string(prefix)]))
                }
                print("saved \(count)")
            }
        }
    }
}
