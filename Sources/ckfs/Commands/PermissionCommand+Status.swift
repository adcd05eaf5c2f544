import ArgumentParser
import CloudStore
import Foundation

extension PermissionCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Print the permission's status: initialState, couldNotComplete, denied or granted.")
        @OptionGroup var place: StoreOptions
        @Argument(help: "The permission: discoverability.") var permission: ApplicationPermission

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                print(try container.permissionStatus(permission, caller: place.caller).rawValue)
            }
        }
    }
}
