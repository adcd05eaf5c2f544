import ArgumentParser
import CloudStore

extension ShareCommand {
    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deny",
            abstract: "Deny a user's request for access to a share you own; with --block they may not ask again, and leave the share.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String
        @Argument(help: "The user: a name, an email address or a user record name.") var user: String
        @Flag(help: "Block the user from asking again, and take them off the share.") var block = false

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let who = try container.identity(named: user)
                try container.changeShare(url: url, caller: place.caller, environment: place.environment) { (info: inout ShareInfo) throws(CKError) in
                    let request = info.requesters.first { $0.userRecordName == who.userRecordName }
                    guard request != nil || block else {
                        throw CKError(.unknownItem, "\(who.name) has not asked for access to share \(url) (ckfs share list shows who has)")
                    }
                    info.requesters.removeAll { $0.userRecordName == who.userRecordName }
                    if block, !info.blocked.contains(where: { $0.userRecordName == who.userRecordName }) {
                        info.blocked.append(request ?? ShareInfo.Requester(userRecordName: who.userRecordName, emailAddress: who.emails.first, requested: Store.now()))
                    }
                }
                print(block ? "\(who.name) blocked from the share" : "\(who.name)'s request denied")
            }
        }
    }
}
