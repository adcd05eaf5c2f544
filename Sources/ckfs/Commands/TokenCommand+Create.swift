import ArgumentParser
import CloudStore
import CloudStoreServerCore

extension TokenCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Make an API token for the container and print it.")
        @OptionGroup var options: StoreOptions

        func run() throws {
            try reportingErrors {
                print(try options.openStore().container(options.container).createAPIToken())
            }
        }
    }
}
