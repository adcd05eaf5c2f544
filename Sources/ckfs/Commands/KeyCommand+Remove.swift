import ArgumentParser
import CloudStore
import CloudStoreServerCore

extension KeyCommand {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Revoke a server-to-server key.")
        @OptionGroup var options: StoreOptions
        @Argument(help: "The key ID, as ckfs key list shows it.") var keyID: String

        func run() throws {
            try reportingErrors {
                try options.openStore().container(options.container).removeServerKey(keyID)
            }
        }
    }
}
