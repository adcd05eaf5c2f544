import ArgumentParser
import CloudStore

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show the schema, change its indexes, and deploy it from development to production.",
        subcommands: [Show.self, Index.self, Deploy.self]
    )
}
