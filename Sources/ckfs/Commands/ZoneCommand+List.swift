import ArgumentParser
import CloudStore

extension ZoneCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the zones of a database, one per line.")
        @OptionGroup var options: DatabaseOptions

        func run() throws {
            try reportingErrors {
                for zone in try options.openDatabase().zones() { print(zone.zoneID.zoneName) }
            }
        }
    }
}
