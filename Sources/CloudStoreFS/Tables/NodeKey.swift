import CloudStore

/// Which database of which container a node belongs to; `user` is empty for the public one.
struct DatabaseKey: Hashable, Sendable {
    var container: String
    var scope: DatabaseScope
    var user: String
}

/// What a node of the tree stands for (DESIGN §4). Records are named by type as well as
/// name because the tree shows them in a folder per type.
enum NodeKey: Hashable, Sendable {
    case root
    case lostFound
    case lostFoundFile(String)
    case container(String)
    case database(DatabaseKey)
    case zone(DatabaseKey, String)
    case recordType(DatabaseKey, zone: String, type: String)
    case record(DatabaseKey, zone: String, type: String, name: String)
    /// An editor's or tool's temporary file, by its unique number.
    case scratch(UInt64)

    var isDirectory: Bool {
        switch self {
        case .root, .lostFound, .container, .database, .zone, .recordType: true
        case .lostFoundFile, .record, .scratch: false
        }
    }

    var databaseKey: DatabaseKey? {
        switch self {
        case .database(let d), .zone(let d, _), .recordType(let d, _, _), .record(let d, _, _, _): d
        default: nil
        }
    }

    /// The zone a node is in, with its database.
    var zone: (DatabaseKey, String)? {
        switch self {
        case .zone(let d, let z), .recordType(let d, let z, _), .record(let d, let z, _, _): (d, z)
        default: nil
        }
    }
}

/// File names of records: `<recordName>.json`, the name percent-encoded where it is not a
/// portable file name (the same encoding as the store's own files).
enum RecordFileName {
    static func make(_ recordName: String) -> String { StoreLayout.encode(recordName) + ".json" }

    /// The record name a file name stands for, or nil when it is some other file (a scratch
    /// file): only the canonical encoding counts, so `.x.json.swp` or `.x.json` are not records.
    static func recordName(_ fileName: String) -> String? {
        guard fileName.hasSuffix(".json"), fileName.count > 5 else { return nil }
        guard let name = StoreLayout.decode(String(fileName.dropLast(5))), make(name) == fileName else { return nil }
        return name
    }
}
