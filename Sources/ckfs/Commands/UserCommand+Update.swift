import ArgumentParser
import CloudStore

extension UserCommand {
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "update", abstract: "Change an identity: emails, contacts, restriction and write roles.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The identity's name.") var name: String
        @Option(help: "Add an email address (repeat for more).") var email: [String] = []
        @Option(help: "Add a contact's email address (repeat for more).") var contact: [String] = []
        @Option(help: "Remove a contact (repeat for more).") var removeContact: [String] = []
        @Flag(inversion: .prefixedNo, help: "Deny the identity (account status restricted) or allow it again.") var restricted: Bool?
        @Option(help: "Let it change and delete every public record of this type (repeat for more).") var grantWrite: [String] = []
        @Option(help: "Take that role back (repeat for more).") var revokeWrite: [String] = []

        func run() throws {
            try reportingErrors {
                let u = try place.openStore().container(place.container).updateUser(
                    name, addEmails: email, addContacts: contact, removeContacts: removeContact, restricted: restricted,
                    grantWriteRoles: grantWrite, revokeWriteRoles: revokeWrite)
                print(describe(u))
            }
        }
    }
}
