import ArgumentParser
import CloudStore
import Foundation

/// Options every command that works on a database takes: ``StoreOptions`` plus the database and zone.
struct DatabaseOptions: ParsableArguments {
    @OptionGroup var place: StoreOptions

    @Option(help: "The database: public, private or shared (zones other users share with you; give --owner).")
    var database: DatabaseScope = .private

    @Option(help: "The zone.")
    var zone: String = ZoneID.defaultZoneName

    @Option(help: "In the shared database: the user who shares the zone (a name, email address or user record name).")
    var owner: String?

    /// Every option at its default, for ``DirectCommandLine``.
    static var directDefaults: Self {
        var options = Self()
        options.place = .directDefaults
        options.database = .private
        options.zone = ZoneID.defaultZoneName
        options.owner = nil
        return options
    }

    /// The options as ``DirectCommandLine`` reads them, the store's among them.
    static var directOptions: [DirectOption<Self>] { StoreOptions.directOptions.map { $0.within(\.place) } + [
        .value("--database") { options, word in DatabaseScope(argument: word).map { options.database = $0 } != nil },
        .value("--zone") { $0.zone = $1; return true },
        .value("--owner") { $0.owner = $1; return true },
    ] }

    /// ``StoreOptions``' checks, then these options' own, in ArgumentParser's order.
    func validateAll() throws {
        try place.validate()
        try validate()
    }

    var storePath: String { place.storePath }
    var container: String? { place.container }
    var user: String? { place.user }
    var environment: CloudStore.Environment { place.environment }

    func openStore(reading: ZoneReading = .indexed) throws -> Store { try place.openStore(reading: reading) }

    func openDatabase() throws -> Database {
        let store = try openStore()
        let container = try store.container(container)
        guard database == .shared else {
            return try container.database(database, caller: place.caller, environment: environment)
        }
        guard let owner else { throw ValidationError("the shared database holds zones of several users: name the one who shares the zone with --owner") }
        return try container.sharedDatabase(caller: place.caller, environment: environment).database(owner: try container.identity(named: owner).userRecordName)
    }

    func validate() throws {
        if owner != nil && database != .shared { throw ValidationError("--owner names whose zone to use in the shared database; give --database shared with it") }
    }
}
