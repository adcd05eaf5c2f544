import ArgumentParser
import CloudStore

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Show, add, change, list and discover the users of a container.",
        subcommands: [WhoAmI.self, Add.self, Update.self, List.self, Discover.self, AutoEnrol.self]
    )
}

/// An identity as `ckfs user` prints it, one `key: value` per line.
func describe(_ u: Identity) -> String {
    var lines = ["name: \(u.name)", "userRecordID: \(u.userRecordName)"]
    if let uid = u.uid { lines.append("uid: \(uid)") }
    if !u.emails.isEmpty { lines.append("emails: \(u.emails.joined(separator: ", "))") }
    if !u.contacts.isEmpty { lines.append("contacts: \(u.contacts.joined(separator: ", "))") }
    lines.append("discoverability: \(u.discoverability.rawValue)")
    return lines.joined(separator: "\n")
}
