import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct IndexAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Give a field an index in development.")
        @OptionGroup var options: DatabaseOptions
        @OptionGroup var which: IndexArguments

        func run() throws { try which.set(present: true, options) }
    }
}
