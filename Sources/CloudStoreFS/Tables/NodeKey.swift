import CloudStore

/// Which database of which container a node belongs to; `user` is empty for the public one.
/// A shared database is one owner's zones as `user` reaches them: `owner` is that owner's
/// user record name (empty for the other scopes).
struct DatabaseKey: Hashable, Sendable {
    var container: String
    var scope: DatabaseScope
    var user: String
    var owner: String = ""
}

/// A type folder: one database's records of one type in one zone.
struct RecordFolder: Hashable, Sendable {
    var database: DatabaseKey
    var zone: String
    var type: String
}

/// Whose key-value store a `keyvalue/` folder shows: a local identity's, in one container.
struct KeyValueRef: Hashable, Sendable {
    var container: String
    var user: String
}

/// What a node of the tree stands for. Records are named by type as well as
/// name because the tree shows them in a folder per type.
enum NodeKey: Hashable, Sendable {
    case root
    case lostFound
    case lostFoundFile(String)
    case container(String)
    /// `<container>/shared/`: a folder for each user who shares zones with `user`.
    case shared(container: String, user: String)
    case database(DatabaseKey)
    case zone(DatabaseKey, String)
    case recordType(DatabaseKey, zone: String, type: String)
    case record(DatabaseKey, zone: String, type: String, name: String)
    /// `<container>/keyvalue/`: the caller's key-value entries.
    case keyValueFolder(KeyValueRef)
    case keyValueEntry(KeyValueRef, key: String)
    /// An editor's or tool's temporary file, by its unique number.
    case scratch(UInt64)

    var isDirectory: Bool {
        switch self {
        case .root, .lostFound, .container, .shared, .database, .zone, .recordType, .keyValueFolder: true
        case .lostFoundFile, .record, .keyValueEntry, .scratch: false
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

/// File names of stored items: `<name><extension>`, the name percent-encoded where it is not
/// a portable file name (the same encoding as the store's own files).
struct ItemFileName {
    let pathExtension: String

    /// Records: `<recordName>.json`.
    static let record = ItemFileName(pathExtension: ".json")
    /// Key-value entries: `<key>.plist`.
    static let keyValue = ItemFileName(pathExtension: ".plist")

    /// A record's file name is the store's own (a long name's with a hash: ``StoreLayout/recordFileName(_:)``).
    func make(_ name: String) -> String {
        pathExtension == ".json" ? StoreLayout.recordFileName(name) : StoreLayout.encode(name) + pathExtension
    }

    /// The name a file name stands for, or nil when it is some other file (a scratch file):
    /// only the canonical encoding counts, so `.x.json.swp` or `.x.json` are not records.
    func name(_ fileName: String) -> String? {
        guard fileName.hasSuffix(pathExtension), fileName.count > pathExtension.count else { return nil }
        guard let name = StoreLayout.decode(String(fileName.dropLast(pathExtension.count))), make(name) == fileName else { return nil }
        return name
    }

    /// Why `fileName` can be neither an item nor a scratch file: it has the item extension and
    /// no leading dot (so it is meant as an item), but is not the canonical encoding of a name.
    /// A file made under it would hold its text in memory only, never saved.
    func refusal(_ fileName: String) -> String? {
        guard fileName.hasSuffix(pathExtension), !fileName.hasPrefix("."), name(fileName) == nil else { return nil }
        let stem = fileName.dropLast(pathExtension.count)
        if stem.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "\(fileName.debugDescription): a name with control characters is no record name or key (those are printable); name the file \(make(String(stem)).debugDescription) if you mean that name, spelled with %XX"
        }
        return "\(fileName.debugDescription) is not how a stored name is spelled: in file names \"%\" starts a %XX escape (a literal % is %25); name the file \(make(String(stem)).debugDescription) for the name as written"
    }
}
