import ArgumentParser
import CloudStore

extension ShareCommand {
    struct AccessRequests: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "access-requests",
            abstract: "Let users ask for access to a share you own (ckfs share request-access), or with --off stop them.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String
        @Flag(help: "Stop taking requests; those waiting stay for you to answer.") var off = false

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                try container.changeShare(url: url, caller: place.caller, environment: place.environment) { (info: inout ShareInfo) throws(CKError) in
                    info.allowsAccessRequests = !off
                }
                print(off ? "the share takes no access requests" : "the share takes access requests")
            }
        }
    }
}
