import ArgumentParser
import CloudStore

extension ShareCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the shares you own or take part in, one per line: URL, owner, zone, root, your status, each participant, and who asks or is blocked.")
        @OptionGroup var place: StoreOptions

        func run() throws {
            try reportingErrors {
                let container = try place.openStore().container(place.container)
                let me = try container.userRecordName(for: place.caller)
                let names = Dictionary(try container.identities().map { ($0.userRecordName, $0.name) }, uniquingKeysWith: { a, _ in a })
                for found in try container.shares(environment: place.environment) {
                    let info = found.info
                    guard found.ownerName == me || info.participant(me) != nil else { continue }
                    let mine = info.participant(me)
                    var line = ShareURL.make(container: container.identifier, shortGUID: info.shortGUID)
                    line += "\towner=\(names[found.ownerName] ?? found.ownerName)\tzone=\(found.zoneID.zoneName)"
                    line += "\troot=\(info.rootRecordName ?? "(whole zone)")\tyou=\(mine.map { "\($0.permission.rawValue),\($0.acceptanceStatus.rawValue)" } ?? "-")"
                    line += "\tpublic=\(info.publicPermission.rawValue)"
                    for p in info.participants {
                        let who = p.isUnclaimed ? "(one-time URL \(p.id))" : names[p.userRecordName] ?? p.userRecordName
                        line += "\t\(who):\(p.role.rawValue),\(p.permission.rawValue),\(p.acceptanceStatus.rawValue)"
                    }
                    // Who asks and who is blocked: the owner's to see.
                    if found.ownerName == me {
                        if info.allowsAccessRequests { line += "\taccess-requests=allowed" }
                        if !info.requesters.isEmpty { line += "\trequesters=" + info.requesters.map { names[$0.userRecordName] ?? $0.userRecordName }.joined(separator: ",") }
                        if !info.blocked.isEmpty { line += "\tblocked=" + info.blocked.map { names[$0.userRecordName] ?? $0.userRecordName }.joined(separator: ",") }
                    }
                    print(line)
                }
            }
        }
    }
}
