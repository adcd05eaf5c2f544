import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct IndexRemove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take an index from a field in development.")
        @OptionGroup var options: DatabaseOptions
        @OptionGroup var which: IndexArguments

        func run() throws {
            try reportingErrors {
                try options.openStore().container(options.container).schema.setIndex(which.schemaIndex, on: which.field, of: which.type, present: false)
                print("\(which.type).\(which.field) is no longer \(which.schemaIndex.word) in development; `ckfs schema deploy` copies that to production")
            }
        }
    }
}
