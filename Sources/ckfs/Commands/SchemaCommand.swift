import ArgumentParser
import CloudStore

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show the schema and deploy it from development to production.",
        subcommands: [Show.self, Deploy.self]
    )
}
