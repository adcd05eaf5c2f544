import ArgumentParser
import CloudStore

extension ShareCommand {
    struct Accept: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "accept",
            abstract: "Accept a share: its zone shows in your shared database.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The share's URL (or its short GUID).") var url: String

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let found = try container.acceptShare(url: url, caller: place.caller, environment: place.environment)
                let owner = (try? container.identities())?.first { $0.userRecordName == found.ownerName }?.name ?? found.ownerName
                print("accepted: zone \(found.zoneID.zoneName) of \(owner)")
            }
        }
    }
}
