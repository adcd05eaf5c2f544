import ArgumentParser
import CloudStore

extension ShareCommand {
    struct RequestAccess: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "request-access",
            abstract: "Ask the owner of a share that takes access requests to add you.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                try container.requestShareAccess(url: url, caller: place.caller, environment: place.environment)
                print("asked: the share's owner adds you (ckfs share add-participant), or denies or blocks you")
            }
        }
    }
}
