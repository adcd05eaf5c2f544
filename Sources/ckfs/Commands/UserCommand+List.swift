import ArgumentParser
import CloudStore

extension UserCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the identities of the container, one per line.")
        @OptionGroup var place: StoreOptions

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let restricted = Set(container.restrictedUsers)
                for u in try container.identities() {
                    let roles = container.writeRoles.filter { $0.value.contains(u.name) }.keys.sorted()
                    var line = "\(u.name)\t\(u.userRecordName)\tuid=\(u.uid.map(String.init) ?? "-")\t\(restricted.contains(u.name) ? "restricted" : "available")"
                    line += "\temails=\(u.emails.joined(separator: ","))\tdiscoverability=\(u.discoverability.rawValue)"
                    if !roles.isEmpty { line += "\twrite=\(roles.joined(separator: ","))" }
                    print(line)
                }
                if !container.autoEnrol { print("(new users are not enrolled on first use)") }
            }
        }
    }
}
