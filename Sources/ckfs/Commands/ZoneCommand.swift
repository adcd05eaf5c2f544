import ArgumentParser
import CloudStore

struct ZoneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zone",
        abstract: "Create, list and delete zones.",
        subcommands: [Create.self, Delete.self, List.self]
    )
}
