import ArgumentParser
import CloudStore
import Foundation

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Save, fetch, query and delete records.",
        subcommands: [Save.self, Fetch.self, Query.self, Delete.self]
    )
}
