import ArgumentParser
import CloudStore

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Show, add, change, list and discover the users of a container.",
        subcommands: [WhoAmI.self, Add.self, Update.self, List.self, Discover.self, AutoEnrol.self]
    )
}

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

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an identity to the container.")
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

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change an identity: emails, contacts, restriction and write roles.")
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

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the identities of the container, one per line.")
        @OptionGroup var place: StoreOptions

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let restricted = Set(container.restrictedUsers)
                for u in try container.identities() {
                    let roles = container.writeRoles.filter { $0.value.contains(u.name) }.keys.sorted()
                    var line = "\(u.name)\t\(u.userRecordName)\tuid=\(u.uid.map(String.init) ?? "-")\t\(restricted.contains(u.name) ? "restricted" : "available")"
                    line += "\temails=\(u.emails.joined(separator: ","))\tdiscoverability=\(u.discoverability.rawValue)"
                    if !roles.isEmpty { line += "\twrite=\(roles.joined(separator: ","))" }
                    print(line)
                }
                if !container.autoEnrol { print("(new users are not enrolled on first use)") }
            }
        }
    }

    struct Discover: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Find users who let themselves be found: all in your contacts, or one by email or user record ID.")
        @OptionGroup var place: StoreOptions
        @Option(help: "Find the user with this email address.") var email: String?
        @Option(name: .customLong("record-id"), help: "Find the user with this user record ID.") var recordID: String?

        func validate() throws {
            if email != nil && recordID != nil { throw ValidationError("give --email or --record-id, not both") }
        }

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let found: [DiscoveredIdentity]
                if let email {
                    found = try container.discoverIdentity(email: email, caller: place.caller).map { [$0] } ?? []
                } else if let recordID {
                    found = try container.discoverIdentity(userRecordName: recordID, caller: place.caller).map { [$0] } ?? []
                } else {
                    found = try container.discoverAllIdentities(caller: place.caller)
                }
                for u in found { print("\(u.name)\t\(u.userRecordName)\t\(u.emails.joined(separator: ","))") }
                if found.isEmpty && (email != nil || recordID != nil) {
                    throw CKError(.unknownItem, "no discoverable user \(email ?? recordID ?? ""): there is none, or that user has not granted discoverability")
                }
            }
        }
    }

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

/// An identity as `ckfs user` prints it, one `key: value` per line.
func describe(_ u: Identity) -> String {
    var lines = ["name: \(u.name)", "userRecordID: \(u.userRecordName)"]
    if let uid = u.uid { lines.append("uid: \(uid)") }
    if !u.emails.isEmpty { lines.append("emails: \(u.emails.joined(separator: ", "))") }
    if !u.contacts.isEmpty { lines.append("contacts: \(u.contacts.joined(separator: ", "))") }
    lines.append("discoverability: \(u.discoverability.rawValue)")
    return lines.joined(separator: "\n")
}
