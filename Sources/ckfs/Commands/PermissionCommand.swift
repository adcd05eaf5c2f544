import ArgumentParser
import CloudStore
import Foundation

struct PermissionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission",
        abstract: "Read or request an application permission.",
        subcommands: [Status.self, Request.self]
    )
}

extension ApplicationPermission: ExpressibleByArgument {
    public init?(argument: String) {
        guard argument == "discoverability" || argument == "userDiscoverability" else { return nil }
        self = .userDiscoverability
    }
    public static var allValueStrings: [String] { ["discoverability"] }
}
