import ArgumentParser
import CloudStore

struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share records and zones with other users, and accept shares.",
        subcommands: [Create.self, List.self, AddParticipant.self, RemoveParticipant.self, Accept.self, RequestAccess.self,
                      AccessRequests.self, Deny.self, Unblock.self]
    )
}

/// What anyone with a share's URL may do, as the CLI spells it.
enum PublicPermission: String, ExpressibleByArgument, CaseIterable {
    case none, readOnly = "read-only", readWrite = "read-write"

    var engine: ShareInfo.Permission {
        switch self {
        case .none: .none
        case .readOnly: .readOnly
        case .readWrite: .readWrite
        }
    }
}
