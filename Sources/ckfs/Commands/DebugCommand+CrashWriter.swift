import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

extension DebugCommand {
    /// Saves numbered atomic batches forever, printing `saved N` after each is acknowledged.
    /// Batch N sets field `batch` = N on records fixed-0…fixed-(K-1), creates b-N, and deletes
    /// b-(N-5): after a crash all fixed records must agree and b-records must match.
    struct CrashWriter: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "crash-writer", abstract: "Save numbered batches until killed.")
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
}
