import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

extension DebugCommand {
    /// Increments a counter record `--times` times with fetch, add one, save under the default
    /// policy, retrying on `serverRecordChanged`. Prints `conflicts N` at the end.
    struct Counter: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "counter", abstract: "Increment a counter record with retries on conflict.")
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
}
