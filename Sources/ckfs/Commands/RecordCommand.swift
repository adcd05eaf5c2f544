import ArgumentParser
import CloudStore
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Save, fetch, query and delete records.",
        subcommands: [Save.self, Fetch.self, Query.self, Delete.self]
    )
}

extension RecordCommand {
    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save records from JSON files or standard input and print them as stored.",
            discussion: """
            Input is one record dictionary, an array of them, or {"records": [...], "deletes": ["name", ...]}. \
            Fields may leave out "type" where the value makes it plain: "name": "Mei" or {"value": 3}.
            """
        )

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "JSON files to read; none or - reads standard input.")
        var files: [String] = []

        @Option(help: "The save policy: if-unchanged, changed-keys or all-keys.")
        var policy: SavePolicy = .ifServerRecordUnchanged

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
                            let decoded = try RecordCoding.decode(item, mode: .input, zoneID: zone)
                            records.append(try db.fitToSchema(decoded))
                        } catch var e as CKError {
                            e.message = "\(source)\(items.count > 1 ? " record \(i + 1)" : ""): \(e.message)"
                            throw e
                        }
                    }
                }
                let result = try db.modify(saving: records, deleting: deletes,
                                           options: ModifyOptions(savePolicy: policy, atomic: !nonAtomic,
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

    struct Fetch: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print records by name: one object, or an array for several.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "Record names.")
        var names: [String]

        @Option(help: "Only these fields, comma-separated.")
        var keys: String?

        func validate() throws {
            if names.isEmpty { throw ValidationError("name at least one record to fetch") }
        }

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let desired = keys.map(commaList)
                let results = db.fetch(names.map { RecordID(recordName: $0, zoneID: db.zoneID(options.zone)) }, desiredKeys: desired)
                var found: [JSONValue] = []
                var errors: [CKItemID: CKError] = [:]
                for (id, r) in results {
                    switch r {
                    case .success(let record): found.append(RecordCoding.encode(record))
                    case .failure(let e): errors[.record(id)] = e
                    }
                }
                if names.count == 1 {
                    if let one = found.first { Report.printJSON(one) }
                } else if !found.isEmpty {
                    Report.printJSON(.array(found))
                }
                if errors.count == 1, names.count == 1 { throw errors.first!.value }
                if let e = CKError.partialFailure(errors, "\(errors.count) of \(names.count) records could not be fetched") { throw e }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete records by name.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "Record names.")
        var names: [String]

        @Flag(help: "Delete each record on its own instead of all or nothing.")
        var nonAtomic = false

        func validate() throws {
            if names.isEmpty { throw ValidationError("name at least one record to delete") }
        }

        func run() throws {
            try reportingErrors {
                let db = try options.openDatabase()
                let ids = names.map { RecordID(recordName: $0, zoneID: db.zoneID(options.zone)) }
                let result = try db.modify(saving: [], deleting: ids, options: ModifyOptions(atomic: !nonAtomic))
                Report.warnings(result)
                for id in result.deletedRecordIDs { print("deleted \(id.recordName)") }
                if let error = result.error {
                    if ids.count == 1, let only = error.partialErrorsByItemID?.values.first { throw only }
                    throw error
                }
            }
        }
    }
}
