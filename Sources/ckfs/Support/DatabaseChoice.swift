import ArgumentParser
import CloudStore

/// The database and zone a command works on, as plain values: what ``DatabaseOptions`` parses
/// to, and what ``DirectCommandLine`` reads without ArgumentParser.
struct DatabaseChoice {
    static let defaultScope = DatabaseScope.private

    var place = StoreChoice()
    var database = Self.defaultScope
    var zone = ZoneID.defaultZoneName
    var owner: String?

    func openDatabase() throws -> Database {
        let store = try place.openStore()
        let container = try store.container(place.container)
        guard database == .shared else {
            return try container.database(database, caller: place.caller, environment: place.environment)
        }
        guard let owner else { throw ValidationError("the shared database holds zones of several users: name the one who shares the zone with --owner") }
        return try container.sharedDatabase(caller: place.caller, environment: place.environment).database(owner: try container.identity(named: owner).userRecordName)
    }

    /// These options' own checks (``StoreChoice``'s are its own).
    func validate() throws {
        if owner != nil && database != .shared { throw ValidationError("--owner names whose zone to use in the shared database; give --database shared with it") }
    }

    /// ``StoreChoice``'s checks, then these options' own, in ArgumentParser's order.
    func validateAll() throws {
        try place.validate()
        try validate()
    }

    /// The options as ``DirectCommandLine`` reads them, the store's among them.
    static var directOptions: [DirectOption<Self>] { StoreChoice.directOptions.map { $0.within(\.place) } + [
        .value("--database") { choice, word in DatabaseScope(argument: word).map { choice.database = $0 } != nil },
        .value("--zone") { $0.zone = $1; return true },
        .value("--owner") { $0.owner = $1; return true },
    ] }
}

/// A ``DirectRequest`` on a database: its checks are the database options', then its own.
protocol DatabaseRequest: DirectRequest {
    var database: DatabaseChoice { get }
    /// The command's own checks.
    func validate() throws
}

extension DatabaseRequest {
    func validateAll() throws {
        try database.validateAll()
        try validate()
    }
}
