import ArgumentParser
import CloudStore
import Foundation

extension RecordCommand {
    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete records by name.")

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
                    if ids.count == 1, let only = error.partialErrors?.values.first { throw only }
                    throw error
                }
            }
        }
    }
}
