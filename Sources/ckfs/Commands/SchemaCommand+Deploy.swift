import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct Deploy: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "deploy", abstract: "Copy development's record types, fields and indexes to production.")
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
