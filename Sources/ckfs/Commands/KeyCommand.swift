import ArgumentParser

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Register, list and revoke server-to-server keys for ckfs serve.",
        subcommands: [Add.self, List.self, Remove.self]
    )
}
