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
}

extension RecordCommand.Fetch: DirectlyParsed {
    static let directPath = ["record", "fetch"]

    static var directDefaults: Self {
        var command = Self()
        command.options = .directDefaults
        command.names = []
        command.keys = nil
        return command
    }

    static var directOptions: [DirectOption<Self>] {
        DatabaseOptions.directOptions.map { $0.within(\.options) } + [.value("--keys") { $0.keys = $1; return true }]
    }

    static var directArgument: ((inout Self, String) -> Bool)? { { $0.names.append($1); return true } }

    func validateAll() throws {
        try options.validateAll()
        try validate()
    }
}
