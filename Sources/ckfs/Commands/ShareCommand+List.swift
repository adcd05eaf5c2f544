import ArgumentParser
import CloudStore

extension ShareCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the shares you own or take part in, one per line: URL, owner, zone, root, your status, then each participant.")
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
                        line += "\t\(names[p.userRecordName] ?? p.userRecordName):\(p.role.rawValue),\(p.permission.rawValue),\(p.acceptanceStatus.rawValue)"
                    }
                    print(line)
                }
            }
        }
    }
}
