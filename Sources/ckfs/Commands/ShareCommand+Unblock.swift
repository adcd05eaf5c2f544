import ArgumentParser
import CloudStore

extension ShareCommand {
    struct Unblock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unblock",
            abstract: "Let a user you blocked ask for access to a share you own again.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String
        @Argument(help: "The user: a name, an email address or a user record name.") var user: String

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let who = try container.identity(named: user)
                try container.changeShare(url: url, caller: place.caller, environment: place.environment) { (info: inout ShareInfo) throws(CKError) in
                    guard info.blocked.contains(where: { $0.userRecordName == who.userRecordName }) else {
                        throw CKError(.unknownItem, "\(who.name) is not blocked from share \(url)")
                    }
                    info.blocked.removeAll { $0.userRecordName == who.userRecordName }
                }
                print("\(who.name) may ask for access again")
            }
        }
    }
}
