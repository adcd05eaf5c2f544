import ArgumentParser
import CloudStore
import CloudStoreBench
import Foundation

extension DebugCommand {
    /// Fills a zone with `--count` of the bench's records (`item-<i>`, five fields), in
    /// batches of 400, for profiling a large zone by hand.
    struct Fill: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "fill", abstract: "Fill a zone with numbered records in batches.")
        @OptionGroup var options: DatabaseOptions
        @Option(help: "How many records.") var count = 100_000
        @Option(help: "The number of the first record (item-<first>), to add records to a filled zone.") var first = 0
        @Flag(help: "Save over records that exist (the all-keys policy), to measure updates.") var overwrite = false

        func validate() throws {
            guard first >= 0 else { throw ValidationError("--first must be 0 or more (it is \(first)): records are numbered item-0, item-1, …") }
        }

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let zone = db.zoneID(options.zone)
                let modifyOptions = ModifyOptions(savePolicy: overwrite ? .allKeys : .ifServerRecordUnchanged)
                let progress = TerminalProgress("saving", total: count)
                for start in stride(from: 0, to: count, by: 400) {
                    let batch = (start..<min(start + 400, count)).map { Bench.record(first + $0, zone: zone) }
                    if let error = try db.modify(saving: batch, options: modifyOptions).error { throw error }
                    progress.update(start + batch.count)
                }
                progress.finish()
                db.store.waitForRecordFiles()
                print(first == 0 ? "saved \(count)" : "saved \(count), item-\(first) to item-\(first + count - 1)")
            }
        }
    }
}
