import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

extension DebugCommand {
    /// Saves `--count` records named `<prefix>-<i>`, one operation each.
    struct WriteLoop: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "write-loop", abstract: "Save many records, one operation each.")
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
