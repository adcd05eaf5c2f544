import ArgumentParser
import CloudStore
import Foundation

extension RecordCommand {
    struct Fetch: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "fetch", abstract: "Print records by name: one object, or an array for several.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "Record names.")
        var names: [String]

        @Option(help: "Only these fields, comma-separated.")
        var keys: String?

        var request: Request { Request(database: options.choice, names: names, keys: keys) }

        func validate() throws { try request.validate() }

        func run() throws { try request.run() }

        /// What the command does, from its options' values.
        struct Request: DatabaseRequest {
            var database = DatabaseChoice()
            var names: [String] = []
            var keys: String?

            func validate() throws {
                if names.isEmpty { throw ValidationError("name at least one record to fetch") }
            }

            func run() throws {
                try reportingErrors {
                    let db = try database.openDatabase()
                    let desired = keys.map(commaList)
                    let results = db.fetch(names.map { RecordID(recordName: $0, zoneID: db.zoneID(database.zone)) }, desiredKeys: desired)
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
    }
}

extension RecordCommand.Fetch: DirectlyParsed {
    static let directPath = ["record", "fetch"]

    static var directOptions: [DirectOption<Request>] {
        DatabaseChoice.directOptions.map { $0.within(\.database) } + [.value("--keys") { $0.keys = $1; return true }]
    }

    static var directArgument: ((inout Request, String) -> Bool)? { { $0.names.append($1); return true } }
}
