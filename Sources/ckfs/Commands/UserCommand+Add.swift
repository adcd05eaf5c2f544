import ArgumentParser
import CloudStore

extension UserCommand {
    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an identity to the container.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The identity's name.") var name: String
        @Option(help: "The OS user it is (a mount caller with this uid acts as it).") var uid: UInt32?
        @Option(help: "An email address others find it by (repeat for more).") var email: [String] = []
        @Option(help: "An email address of someone it knows (repeat for more).") var contact: [String] = []

        func run() throws {
            try reportingErrors {
                let u = try place.openStore().container(place.container).addUser(name, uid: uid, emails: email, contacts: contact)
                print(describe(u))
            }
        }
    }
}
