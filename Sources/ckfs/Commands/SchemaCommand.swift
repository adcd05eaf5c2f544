import ArgumentParser
import CloudStore

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show the schema and deploy it from development to production.",
        subcommands: [Show.self, Deploy.self]
    )
}

extension SchemaCommand {
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print record types and field types of both environments as JSON.")
        @OptionGroup var options: DatabaseOptions

        func run() throws {
            try reportingErrors {
                Report.printJSON(try options.openStore().container(options.container).schema.json())
            }
        }
    }

    struct Deploy: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Copy development's record types and fields to production.")
        @OptionGroup var options: DatabaseOptions

        func run() throws {
            try reportingErrors {
                let added = try options.openStore().container(options.container).schema.deploy()
                let fields = added.fields.values.reduce(0) { $0 + $1.count }
                print("deployed to production: \(added.types.count) new record types, \(fields) new fields")
            }
        }
    }
}
