import ArgumentParser

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make API tokens and sign users in, for ckfs serve.",
        subcommands: [Create.self, List.self, SignIn.self]
    )
}
