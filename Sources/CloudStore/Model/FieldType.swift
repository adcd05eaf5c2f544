/// The type of a field as CloudKit Web Services names it: `STRING`, `INT64_LIST`, …; an
/// encrypted field's type as CloudKit's server names it, `ENCRYPTED_STRING`.
public struct FieldType: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, CaseIterable, Sendable {
        case string = "STRING"
        case int64 = "INT64"
        case double = "DOUBLE"
        case bytes = "BYTES"
        case timestamp = "TIMESTAMP"
        case location = "LOCATION"
        case reference = "REFERENCE"
        case asset = "ASSETID"
    }

    public var kind: Kind
    public var isList: Bool
    /// A field written through `encryptedValues`: CloudKit keeps no index of it, so no query
    /// may use it.
    public var isEncrypted: Bool

    public init(_ kind: Kind, list: Bool = false, encrypted: Bool = false) {
        self.kind = kind
        self.isList = list
        self.isEncrypted = encrypted
    }

    /// Parses `STRING`, `INT64_LIST`, `ENCRYPTED_STRING`, …; nil for any other name.
    public init?(name: String) {
        let encrypted = name.hasPrefix(Self.encryptedPrefix)
        let plain = encrypted ? String(name.dropFirst(Self.encryptedPrefix.count)) : name
        if plain.hasSuffix("_LIST"), let kind = Kind(rawValue: String(plain.dropLast(5))) {
            self.init(kind, list: true, encrypted: encrypted)
        } else if let kind = Kind(rawValue: plain) {
            self.init(kind, encrypted: encrypted)
        } else {
            return nil
        }
        if encrypted && !Self.encryptable.contains(kind) { return nil }
    }

    /// The name without `ENCRYPTED_`, as a record field dictionary gives the type (beside
    /// `"isEncrypted": true`).
    public var plainName: String { isList ? kind.rawValue + "_LIST" : kind.rawValue }
    public var name: String { isEncrypted ? Self.encryptedPrefix + plainName : plainName }
    public var description: String { name }

    /// The same type, encrypted or not.
    public func encrypted(_ encrypted: Bool) -> FieldType { FieldType(kind, list: isList, encrypted: encrypted) }

    /// Bytes are not searchable; every other type is.
    public var isSearchable: Bool { kind != .bytes }

    /// The kinds a field can hold encrypted: not references, which the server must read, nor
    /// assets, which CloudKit encrypts anyway.
    public static let encryptable: Set<Kind> = [.string, .int64, .double, .bytes, .timestamp, .location]

    static let encryptedPrefix = "ENCRYPTED_"

    public static let allNames: [String] = Kind.allCases.flatMap { [$0.rawValue, $0.rawValue + "_LIST"] }
}
