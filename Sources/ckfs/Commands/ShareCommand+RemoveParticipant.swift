import ArgumentParser
import CloudStore

extension ShareCommand {
    struct RemoveParticipant: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-participant",
            abstract: "Remove a user from a share you own; their access ends at once.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String
        @Argument(help: "The user: a name, an email address or a user record name.") var participant: String

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let user = try container.identity(named: participant)
                try container.changeShare(url: url, caller: place.caller, environment: place.environment) { (info: inout ShareInfo) throws(CKError) in
                    guard info.participant(user.userRecordName) != nil else {
                        throw CKError(.unknownItem, "\(user.name) is not a participant of share \(url)")
                    }
                    info.participants.removeAll { $0.userRecordName == user.userRecordName }
                }
                print("\(user.name) removed from the share")
            }
        }
    }
}
