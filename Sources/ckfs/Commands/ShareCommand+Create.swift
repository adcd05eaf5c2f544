import ArgumentParser
import CloudStore

extension ShareCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Share a record's hierarchy (or with --whole-zone a zone) of your private database; prints the share's URL.")
        @OptionGroup var place: StoreOptions
        @Option(help: "The zone, a custom zone of your private database.") var zone: String
        @Argument(help: "The root record: it and every record whose parent chain leads to it are shared.") var root: String?
        @Flag(help: "Share the whole zone instead of one hierarchy.") var wholeZone = false
        @Option(help: "What anyone with the URL may do: none, read-only or read-write.") var publicPermission: PublicPermission = .none
        @Option(help: "The share's title.") var title: String?
        @Flag(help: "Let users who are not participants ask for access (ckfs share request-access).") var allowAccessRequests = false

        func validate() throws {
            if wholeZone == (root != nil) { throw ValidationError("name a root record, or give --whole-zone to share the zone, not both") }
        }

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let found = try container.createShare(root: root, zone: zone, caller: place.caller, publicPermission: publicPermission.engine,
                                                      title: title, allowsAccessRequests: allowAccessRequests, environment: place.environment)
                print(ShareURL.make(container: container.identifier, shortGUID: found.info.shortGUID))
            }
        }
    }
}
