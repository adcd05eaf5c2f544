import ArgumentParser
import CloudStore

extension SchemaCommand {
    struct IndexRemove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take an index from a field in development.")
        @OptionGroup var options: DatabaseOptions
        @OptionGroup var which: IndexArguments

        func run() throws { try which.set(present: false, options) }
    }
}
