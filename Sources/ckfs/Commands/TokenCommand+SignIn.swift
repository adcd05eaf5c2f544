import ArgumentParser
import CloudStore
import CloudStoreServerCore

extension TokenCommand {
    struct SignIn: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract: "Sign a user in and print a web auth token that acts as them.")
        @OptionGroup var options: StoreOptions
        @Option(help: "How long the token lasts, in seconds (default: two weeks).") var lifetime: Int64 = Container.defaultWebAuthLifetime

        func validate() throws {
            guard lifetime > 0, lifetime <= Container.maxWebAuthLifetime else {
                throw ValidationError("--lifetime must be from 1 second to \(Container.maxWebAuthLifetime) seconds (ten years)")
            }
        }

        func run() throws {
            try reportingErrors {
                print(try options.openStore().container(options.container).signIn(userName: options.userName, lifetime: lifetime))
            }
        }
    }
}
