/// Where things live in a store directory.
package struct StoreLayout: Sendable {
    public let root: String

    public init(root: String) {
        var r = root
        while r.count > 1 && r.hasSuffix("/") { r.removeLast() }
        self.root = r
    }

    public var settingsFile: String { root + "/ckfs-store.json" }
    public func containerDirectory(_ id: String) -> String { root + "/" + Self.encode(id) }
    public func containerFile(_ id: String) -> String { containerDirectory(id) + "/container.json" }
    public func schemaFile(_ id: String) -> String { containerDirectory(id) + "/schema.json" }

    /// The directory of one database: `<container>/<environment>/public` or `…/private/<user>`;
    /// a shared database's zones are their owner's (`user`), so it is the owner's private one.
    public func databaseDirectory(_ container: String, _ environment: Environment, _ scope: DatabaseScope, user: String) -> String {
        let base = containerDirectory(container) + "/" + environment.rawValue
        switch scope {
        case .public: return base + "/public"
        case .private, .shared: return base + "/private/" + Self.encode(user)
        }
    }

    /// Where a user's own files of their shared database are kept (its subscriptions; its
    /// zones are their owners'): `<container>/<environment>/shared/<user>`.
    public func sharedDatabaseDirectory(_ container: String, _ environment: Environment, user: String) -> String {
        sharedDatabasesDirectory(container, environment) + "/" + Self.encode(user)
    }

    /// The folder of every user's shared-database files.
    public func sharedDatabasesDirectory(_ container: String, _ environment: Environment) -> String {
        containerDirectory(container) + "/" + environment.rawValue + "/shared"
    }

    public static func zonesDirectory(_ database: String) -> String { database + "/zones" }
    public static func zoneDirectory(_ database: String, zone: String) -> String { zonesDirectory(database) + "/" + encode(zone) }
    public static func recordsDirectory(_ zone: String) -> String { zone + "/records" }
    public static func assetsDirectory(_ zone: String) -> String { zone + "/assets" }
    public static func recordFile(_ zone: String, name: String) -> String { zone + "/records/" + recordFileName(name) }

    /// The file name of record `name`: `<encoded name>.json`, or, where that would pass a file
    /// name's 255 bytes, the encoded name's first 180 bytes, `%~`, 32 hex digits of the name's
    /// SHA-256 and `.json`. `%~` is no valid escape, so no other name is spelled so; the file
    /// holds the real name, as every record file does.
    public static func recordFileName(_ name: String) -> String {
        let encoded = encode(name)
        if encoded.utf8.count + 5 <= 255 { return encoded + ".json" }
        return String(decoding: encoded.utf8.prefix(180), as: UTF8.self) + longNameMark + AssetHasher.sha256Hex(Array(name.utf8)).prefix(32) + ".json"
    }

    static let longNameMark = "%~"

    /// The record name a file name spells; nil for a long name's file (``recordFileName(_:)``:
    /// the name is in the file) and for what is no record file.
    public static func recordName(fromFileName file: String) -> String? {
        guard file.hasSuffix(".json") else { return nil }
        return decode(String(file.dropLast(5)))
    }

    /// Whether `file` is the file name of a record whose name is too long to spell in it.
    public static func isLongRecordFileName(_ file: String) -> Bool {
        file.hasSuffix(".json") && file.contains(longNameMark)
    }
    public static func assetFile(_ zone: String, checksum: String) -> String { zone + "/assets/" + checksum }
    public static func zoneFile(_ zone: String) -> String { zone + "/zone.json" }
    public static func logFile(_ zone: String) -> String { zone + "/log.jsonl" }
    public static func lockFile(_ zone: String) -> String { zone + "/lock" }
    public static func journalFile(_ zone: String) -> String { zone + "/journal" }
    /// The zone's index file, with SQLite's `-wal` and `-shm` files beside it.
    public static func indexFile(_ zone: String) -> String { zone + "/index.sqlite" }

    /// Percent-encodes what is not a portable file name part: `/`, `%`, NUL, control
    /// characters and a leading `.`. The JSON inside a file always holds the real name.
    /// Other bytes, UTF-8 of non-ASCII characters included, are kept as they are.
    public static func encode(_ name: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        for (i, b) in name.utf8.enumerated() {
            if b == UInt8(ascii: "/") || b == UInt8(ascii: "%") || b < 0x20 || b == 0x7F || (i == 0 && b == UInt8(ascii: ".")) {
                out += Array(("%" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true)).utf8)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The inverse of ``encode(_:)``; nil for text that is not a valid encoding.
    public static func decode(_ fileName: String) -> String? {
        var bytes: [UInt8] = []
        var it = Array(fileName.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func split(_ path: String) -> (dir: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }
}
