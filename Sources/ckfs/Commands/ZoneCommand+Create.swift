import ArgumentParser
import CloudStore

extension ZoneCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a zone in the private database.")
        @OptionGroup var options: DatabaseOptions
        @Argument(help: "The zone name.") var name: String

        func run() throws {
            try reportingErrors {
                let zone = try options.openDatabase().createZone(name)
                print("zone \(zone.zoneID.zoneName) ready")
            }
        }
    }
}
