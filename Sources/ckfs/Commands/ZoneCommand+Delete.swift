import ArgumentParser
import CloudStore

extension ZoneCommand {
    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a zone and every record in it.")
        @OptionGroup var options: DatabaseOptions
        @Argument(help: "The zone name.") var name: String

        func run() throws {
            try reportingErrors {
                try options.openDatabase().deleteZone(name)
                print("zone \(name) deleted")
            }
        }
    }
}
