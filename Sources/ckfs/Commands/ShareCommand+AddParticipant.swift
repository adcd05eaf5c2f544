import ArgumentParser
import CloudStore

extension ShareCommand {
    struct AddParticipant: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-participant",
            abstract: "Add a user to a share you own (or change their permission); they accept it with ckfs share accept.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String
        @Argument(help: "The user: a name, an email address or a user record name.") var participant: String
        @Option(help: "read-only or read-write.") var permission: PublicPermission = .readOnly

        func validate() throws {
            if permission == .none { throw ValidationError("a participant's permission is read-only or read-write; remove a participant with ckfs share remove-participant") }
        }

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let user = try container.identity(named: participant)
                let granted = permission.engine
                try container.changeShare(url: url, caller: place.caller, environment: place.environment) { (info: inout ShareInfo) throws(CKError) in
                    if let i = info.participants.firstIndex(where: { $0.userRecordName == user.userRecordName }) {
                        info.participants[i].permission = granted
                        // One who left is invited again.
                        if info.participants[i].acceptanceStatus == .removed { info.participants[i].acceptanceStatus = .pending }
                    } else {
                        info.participants.append(.init(userRecordName: user.userRecordName, role: .privateUser, permission: granted,
                                                       acceptanceStatus: .pending, emailAddress: user.emails.first))
                    }
                }
                print("\(user.name) may \(permission == .readWrite ? "read and change" : "read") the share once they accept it")
            }
        }
    }
}
