import ArgumentParser
import CloudStore

struct ZoneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zone",
        abstract: "Create, list and delete zones.",
        subcommands: [Create.self, Delete.self, List.self]
    )
}

extension ZoneCommand {
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a zone in the private database.")
        @OptionGroup var options: DatabaseOptions
        @Argument(help: "The zone name.") var name: String

        func run() throws {
            try reportingErrors {
                let zone = try options.openDatabase().createZone(name)
                print("zone \(zone.zoneID.zoneName) ready")
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a zone and every record in it.")
        @OptionGroup var options: DatabaseOptions
        @Argument(help: "The zone name.") var name: String

        func run() throws {
            try reportingErrors {
                try options.openDatabase().deleteZone(name)
                print("zone \(name) deleted")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the zones of a database, one per line.")
        @OptionGroup var options: DatabaseOptions

        func run() throws {
            try reportingErrors {
                for zone in try options.openDatabase().zones() { print(zone.zoneID.zoneName) }
            }
        }
    }
}
