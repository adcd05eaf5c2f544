import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print record types, field types and field indexes of both environments as JSON.")
        @OptionGroup var options: DatabaseOptions

        func run() throws {
            try reportingErrors {
                Report.printJSON(try options.openStore().container(options.container).schema.json())
            }
        }
    }
}
