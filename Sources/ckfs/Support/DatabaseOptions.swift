import ArgumentParser
import CloudStore

/// Options every command that works on a database takes: ``StoreOptions`` plus the database and zone.
struct DatabaseOptions: ParsableArguments {
    @OptionGroup var place: StoreOptions

    @Option(help: "The database: public, private or shared (zones other users share with you; give --owner).")
    var database: DatabaseScope = DatabaseChoice.defaultScope

    @Option(help: "The zone.")
    var zone: String = ZoneID.defaultZoneName

    @Option(help: "In the shared database: the user who shares the zone (a name, email address or user record name).")
    var owner: String?

    /// The options' values, with what commands ask of them.
    var choice: DatabaseChoice { DatabaseChoice(place: place.choice, database: database, zone: zone, owner: owner) }

    var storePath: String { place.storePath }
    var container: String? { place.container }
    var user: String? { place.user }
    var environment: CloudStore.Environment { place.environment }

    func openStore(reading: ZoneReading = .indexed) throws -> Store { try place.openStore(reading: reading) }
    func openDatabase() throws -> Database { try choice.openDatabase() }
    func validate() throws { try choice.validate() }
}
