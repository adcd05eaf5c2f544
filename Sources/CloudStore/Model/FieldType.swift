/// The type of a field as CloudKit Web Services names it: `STRING`, `INT64_LIST`, ….
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

    public init(_ kind: Kind, list: Bool = false) {
        self.kind = kind
        self.isList = list
    }

    /// Parses `STRING`, `INT64_LIST`, …; nil for any other name.
    public init?(name: String) {
        if name.hasSuffix("_LIST"), let kind = Kind(rawValue: String(name.dropLast(5))) {
            self.init(kind, list: true)
        } else if let kind = Kind(rawValue: name) {
            self.init(kind)
        } else {
            return nil
        }
    }

    public var name: String { isList ? kind.rawValue + "_LIST" : kind.rawValue }
    public var description: String { name }

    /// Bytes are not searchable; every other type is.
    public var isSearchable: Bool { kind != .bytes }

    public static let allNames: [String] = Kind.allCases.flatMap { [$0.rawValue, $0.rawValue + "_LIST"] }
}
