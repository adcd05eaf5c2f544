import ArgumentParser
import CloudStore
import CloudStoreServerCore

extension TokenCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the container's API tokens, one per line.")
        @OptionGroup var options: StoreOptions

        func run() throws {
            try reportingErrors {
                for token in try options.openStore().container(options.container).apiTokens() { print(token) }
            }
        }
    }
}
