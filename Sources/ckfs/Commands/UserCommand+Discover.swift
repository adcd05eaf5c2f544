import ArgumentParser
import CloudStore

extension UserCommand {
    struct Discover: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "discover", abstract: "Find users who let themselves be found: all in your contacts, or one by email or user record ID.")
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
}
