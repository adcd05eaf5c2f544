import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct IndexAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Give a field an index in development.")
        @OptionGroup var options: DatabaseOptions
        @OptionGroup var which: IndexArguments

        func run() throws {
            try reportingErrors {
                try options.openStore().container(options.container).schema.setIndex(which.schemaIndex, on: which.field, of: which.type, present: true)
                print("\(which.type).\(which.field) is \(which.schemaIndex.word) in development; `ckfs schema deploy` copies it to production")
            }
        }
    }
}
