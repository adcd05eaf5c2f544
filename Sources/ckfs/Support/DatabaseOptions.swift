import ArgumentParser
import CloudStore
import Foundation

/// Options every command that works on a database takes: ``StoreOptions`` plus the database and zone.
struct DatabaseOptions: ParsableArguments {
    @OptionGroup var place: StoreOptions

    @Option(help: "The database: public or private.")
    var database: DatabaseScope = .private

    @Option(help: "The zone.")
    var zone: String = ZoneID.defaultZoneName

    var storePath: String { place.storePath }
    var container: String? { place.container }
    var user: String? { place.user }
    var environment: CloudStore.Environment { place.environment }

    func openStore(reading: ZoneReading = .indexed) throws -> Store { try place.openStore(reading: reading) }

    func openDatabase() throws -> Database {
        let store = try openStore()
        return try store.container(container).database(database, caller: place.caller, environment: environment)
    }
}
