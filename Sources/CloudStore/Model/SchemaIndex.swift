/// An index the schema keeps on a field, as CloudKit's schema language names it. A query may
/// use a field only in the ways its indexes allow: `QUERYABLE` for equality (`==`, `!=`, `IN`,
/// `CONTAINS`, `BEGINSWITH`, distance), `SORTABLE` for ranges and sorting, `SEARCHABLE` for
/// token search over a type's strings.
public enum SchemaIndex: String, CaseIterable, Sendable, Comparable {
    case queryable = "QUERYABLE"
    case sortable = "SORTABLE"
    case searchable = "SEARCHABLE"

    /// The indexes a field of `type` can have: none when it is encrypted; else every type is
    /// queryable but bytes and assets, the types with an order (and locations, by distance)
    /// are sortable, and strings are searchable.
    public static func applicable(to type: FieldType) -> Set<SchemaIndex> {
        var out: Set<SchemaIndex> = []
        // The server cannot read an encrypted field, so it keeps no index of it.
        if type.isEncrypted { return out }
        if ![.bytes, .asset].contains(type.kind) { out.insert(.queryable) }
        if [.string, .int64, .double, .timestamp, .location, .reference].contains(type.kind), !type.isList { out.insert(.sortable) }
        if type.kind == .string { out.insert(.searchable) }
        return out
    }

    /// The word as a message says it (`queryable`).
    public var word: String { rawValue.lowercased() }

    public static func < (a: SchemaIndex, b: SchemaIndex) -> Bool { a.rawValue < b.rawValue }
}
