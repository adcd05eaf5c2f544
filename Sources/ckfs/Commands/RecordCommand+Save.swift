import ArgumentParser
import CloudStore
import Foundation

extension RecordCommand {
    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "save",
            abstract: "Save records from JSON files or standard input and print them as stored.",
            discussion: """
            Input is one record dictionary, an array of them, or {"records": [...], "deletes": ["name", ...]}. \
            Fields may leave out "type" where the value makes it plain: "name": "Mei" or {"value": 3}.
            """
        )

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "JSON files to read; none or - reads standard input.")
        var files: [String] = []

        // Optional, so that help says the default by its name: ArgumentParser shows a
        // raw-valued enum's default as its raw value (0).
        @Option(help: "The save policy: if-unchanged (the default), changed-keys or all-keys.")
        var policy: SavePolicy?

        @Flag(help: "Save each record on its own instead of all or nothing per zone.")
        var nonAtomic = false

        @Option(help: "An opaque client change token to keep with the zone; CloudKit returns it with the zone's changes.")
        var clientToken: String?

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                var records: [Record] = []
                var deletes: [RecordID] = []
                var single = true
                let sources = files.isEmpty ? ["-"] : files
                if sources.count > 1 { single = false }
                let zone = db.zoneID(options.zone)
                for source in sources {
                    let json = try InputFile.readJSON(source)
                    var items: [JSONValue] = []
                    switch json {
                    case .array(let a): items = a; single = false
                    case .object(let o) where o["records"] != nil || o["deletes"] != nil:
                        single = false
                        items = o["records"]?.arrayValue ?? []
                        for d in o["deletes"]?.arrayValue ?? [] {
                            guard let name = d.stringValue else { throw CKError(.invalidArguments, "\(source): \"deletes\" must be a list of record names") }
                            deletes.append(RecordID(recordName: name, zoneID: zone))
                        }
                    default: items = [json]
                    }
                    for (i, item) in items.enumerated() {
                        do {
                            records.append(try db.recordToSave(item, zoneID: zone))
                        } catch var e as CKError {
                            e.message = "\(source)\(items.count > 1 ? " record \(i + 1)" : ""): \(e.message)"
                            throw e
                        }
                    }
                }
                let result = try db.modify(saving: records, deleting: deletes,
                                           options: ModifyOptions(savePolicy: policy ?? .ifServerRecordUnchanged, atomic: !nonAtomic,
                                                                  clientChangeToken: clientToken.map { Data($0.utf8) }))
                Report.warnings(result)
                let saved = result.savedRecords.map(RecordCoding.encode)
                if single && deletes.isEmpty && records.count == 1 {
                    if let one = saved.first { Report.printJSON(one) }
                } else if !saved.isEmpty || result.error == nil {
                    Report.printJSON(.array(saved))
                }
                if let error = result.error { throw error }
            }
        }
    }
}
