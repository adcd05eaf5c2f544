import ArgumentParser
import CloudStore

extension UserCommand {
    struct WhoAmI: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show who you act as: identity, user record ID and account status.")
        @OptionGroup var place: StoreOptions

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let caller = place.caller
                let status = container.accountStatus(of: caller)
                print("account: \(status.rawValue)")
                guard status == .available || status == .restricted, let u = try container.identity(of: caller) else { return }
                print(describe(u))
            }
        }
    }
}
