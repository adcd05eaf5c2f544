import ArgumentParser
import CloudStore

extension UserCommand {
    struct AutoEnrol: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "auto-enrol", abstract: "Say whether unknown OS users and --user names get an identity on first use.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "on or off.") var state: Switch

        enum Switch: String, ExpressibleByArgument { case on, off }

        func run() throws {
            try reportingErrors {
                try place.openStore().container(place.container).setAutoEnrol(state == .on)
                print("auto-enrol \(state.rawValue)")
            }
        }
    }
}
