import ArgumentParser
import CloudStore

extension ZoneCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a zone in the private database.")
        @OptionGroup var options: DatabaseOptions
        @Argument(help: "The zone name.") var name: String
        @Flag(help: "Make the zone with per-zone encryption (CloudKit's encryptionScope .perZone): shared only whole, and fixed for the zone's life.")
        var perZoneEncryption = false

        func run() throws {
            try reportingErrors {
                let zone = try options.openDatabase().createZone(name, encryptionScope: perZoneEncryption ? .perZone : .perRecord)
                print("zone \(zone.zoneID.zoneName) ready\(zone.encryptionScope == .perZone ? " (per-zone encryption)" : "")")
            }
        }
    }
}
